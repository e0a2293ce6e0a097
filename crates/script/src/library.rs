//! The reconcile library written in the language: each built-in behaviour as a `logic` and a
//! `desired` block. `tests/library.rs` runs every gallery scenario both ways and asks for the same
//! trace and the same verdicts, so the built-ins stay shorthand for exactly these programs.

use listwatch_core::program::Program;
use listwatch_core::{Behaviour, Config, ControllerConfig, KindId};

use crate::diag::Diagnostic;
use crate::lexer::words;
use crate::logic::{BlockLine, Compiler};

/// `children KIND` (and with the `finalizer` option: `children-finalizer`).
pub const CHILDREN: &str = "\
  logic
    get parent = PRIMARY key
    if parent absent or parent deleting
      done
    scale CHILD owned-by parent to parent.spec
  desired
    get parent = PRIMARY key
    list children = CHILD owned-by parent
    require children.alive == parent.spec
";

pub const CHILDREN_FINALIZER: &str = "\
  logic
    get parent = PRIMARY key
    if parent absent
      done
    if parent deleting
      list children = CHILD owned-by parent
      delete children if-uid
      if parent has-finalizer
        remove-finalizer parent
      done
    if not parent has-finalizer
      add-finalizer parent
    scale CHILD owned-by parent to parent.spec
  desired
    get parent = PRIMARY key
    list children = CHILD owned-by parent
    require children.alive == parent.spec
";

/// `mirror KIND`.
pub const MIRROR: &str = "\
  logic
    get parent = PRIMARY key
    if parent absent or parent deleting
      done
    get copy = CHILD key
    if copy absent
      create CHILD key spec parent.spec owner parent
    else if copy.spec != parent.spec
      update copy spec parent.spec
  desired
    get parent = PRIMARY key
    get copy = CHILD key
    require copy.spec == parent.spec
";

/// `stale-delete KIND` (rabbitmq-operator#648): deletes `NAME-data` by name.
pub const STALE_DELETE: &str = "\
  logic
    get cluster = PRIMARY key
    if cluster absent
      done
    get data = CHILD key-data
    if cluster deleting
      delete data
      if cluster has-finalizer
        remove-finalizer cluster
      done
    if not cluster has-finalizer
      add-finalizer cluster
    if data absent
      create CHILD key-data owner cluster
  desired
    get cluster = PRIMARY key
    get data = CHILD key-data
    require data.owner == cluster.uid
";

/// `stale-delete KIND fixed`: only its own child, with a UID precondition.
pub const STALE_DELETE_FIXED: &str = "\
  logic
    get cluster = PRIMARY key
    if cluster absent
      done
    get data = CHILD key-data
    if cluster deleting
      if data.owner == cluster.uid
        delete data if-uid
      if cluster has-finalizer
        remove-finalizer cluster
      done
    if not cluster has-finalizer
      add-finalizer cluster
    if data absent
      create CHILD key-data owner cluster
  desired
    get cluster = PRIMARY key
    get data = CHILD key-data
    require data.owner == cluster.uid
";

/// `wipe-on-zero KIND` (rabbitmq-operator#758): acts on the transition to 0 it observes.
pub const WIPE_ON_ZERO: &str = "\
  logic
    get cluster = PRIMARY key
    if cluster absent
      forget last
      done
    get data = CHILD key-data
    if cluster.spec == 0 and memory.last != 0
      remember last = 0
      delete data if-uid
    else
      remember last = cluster.spec
      if cluster.spec > 0 and data absent
        create CHILD key-data owner cluster
  desired
    get cluster = PRIMARY key
    get data = CHILD key-data
    require data.owner == cluster.uid and cluster.spec > 0 or data.owner != cluster.uid and cluster.spec <= 0
";

/// `two-writes KIND` (rabbitmq-operator#782): "the child exists, so I must be done".
pub const TWO_WRITES: &str = "\
  logic
    get cluster = PRIMARY key
    if cluster absent or cluster deleting
      done
    get data = CHILD key-data
    if data exists
      done
    create CHILD key-data owner cluster
    if cluster.status != cluster.spec
      update cluster status cluster.spec
  desired
    get cluster = PRIMARY key
    get data = CHILD key-data
    require data.owner == cluster.uid and cluster.status == cluster.spec
";

/// `two-writes KIND fixed`: each write checked against what is there.
pub const TWO_WRITES_FIXED: &str = "\
  logic
    get cluster = PRIMARY key
    if cluster absent or cluster deleting
      done
    get data = CHILD key-data
    if data absent
      create CHILD key-data owner cluster
    if cluster.status != cluster.spec
      update cluster status cluster.spec
  desired
    get cluster = PRIMARY key
    get data = CHILD key-data
    require data.owner == cluster.uid and cluster.status == cluster.spec
";

/// The library's text for a built-in behaviour, with the kinds filled in, indented as under a
/// controller line (`None` for `Behaviour::Program`).
pub fn source(config: &Config, c: &ControllerConfig) -> Option<String> {
    let k = |id: KindId| config.kinds[id.index()].name.as_str();
    let (text, child) = match c.behaviour {
        Behaviour::Children {
            child,
            finalizer: false,
        } => (CHILDREN, child),
        Behaviour::Children {
            child,
            finalizer: true,
        } => (CHILDREN_FINALIZER, child),
        Behaviour::Mirror { target } => (MIRROR, target),
        Behaviour::StaleDelete { child, fixed } => (
            if fixed {
                STALE_DELETE_FIXED
            } else {
                STALE_DELETE
            },
            child,
        ),
        Behaviour::WipeOnZero { child } => (WIPE_ON_ZERO, child),
        Behaviour::TwoWrites { child, fixed } => {
            (if fixed { TWO_WRITES_FIXED } else { TWO_WRITES }, child)
        }
        Behaviour::Program => return None,
    };
    Some(
        text.replace("PRIMARY", k(c.primary))
            .replace("CHILD", k(child)),
    )
}

/// Compiles `logic` and `desired` blocks (the text under a controller line) against a
/// configuration's kinds.
pub fn compile(config: &Config, text: &str) -> Result<Program, Diagnostic> {
    let mut blocks: Vec<(usize, crate::lexer::Word, Vec<BlockLine>)> = vec![];
    for (i, raw) in crate::lexer::lines(text).enumerate() {
        let ws = words(raw).map_err(|(col, msg)| Diagnostic::at(i + 1, col, 1, msg))?;
        let Some(first) = ws.first() else { continue };
        let indent = raw.chars().take_while(|c| *c == ' ').count();
        if indent <= 2 {
            blocks.push((i + 1, first.clone(), vec![]));
        } else if let Some(b) = blocks.last_mut() {
            b.2.push(BlockLine {
                line: i + 1,
                indent,
                words: ws,
            });
        }
    }
    let mut p = Program {
        cluster_scoped: config.cluster_scoped_kinds(),
        kind_names: config.kinds.iter().map(|k| k.name.clone()).collect(),
        ..Program::default()
    };
    for (line, head, lines) in blocks {
        let desired = head.text == "desired";
        let (stmts, bindings, memory) =
            Compiler::new(&config.kinds, desired).compile((line, &head), &lines)?;
        if desired {
            p.desired = Some(stmts);
            p.desired_bindings = bindings;
        } else {
            p.body = stmts;
            p.bindings = bindings;
            p.memory = memory;
        }
    }
    Ok(p)
}

/// The same configuration with every built-in behaviour replaced by its program.
pub fn as_programs(config: &Config) -> Result<Config, Diagnostic> {
    let mut out = config.clone();
    for c in &mut out.controllers {
        if let Some(text) = source(config, c) {
            c.program = Some(std::sync::Arc::new(compile(config, &text)?));
            c.behaviour = Behaviour::Program;
        }
    }
    Ok(out)
}
