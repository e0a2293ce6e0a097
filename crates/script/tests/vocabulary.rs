//! The language's tables are its vocabulary: every row's example parses, and at every place a
//! word can stand (a statement, a controller option, a behaviour, an action, an expectation,
//! a feature gate) the parser reads exactly the words `syntax` lists there, the lists the
//! editor, the preview and "did you mean" use.

use listwatch_script::syntax::{self, Entry, Place};

/// The world every row's example is written for (`parse/table.rs`).
const WORLD: &str = "kind Pod
kind Db
kind Event
apiserver a
apiserver b
controller ctl for Db children Pod
controller op for Db
  logic
    get db = Db key
    done
";

/// The example's lines, indented by `indent` (an option's lines go under a controller).
fn indented(example: &str, indent: &str) -> String {
    example.lines().map(|l| format!("{indent}{l}\n")).collect()
}

/// The scripts that put an entry's example where its place is.
fn scripts(e: &Entry) -> Vec<String> {
    match e.place {
        Place::ControllerOption => {
            let ex = indented(e.example, "  ");
            vec![
                format!("{WORLD}controller t for Db children Pod\n{ex}"),
                format!("{WORLD}controller t for Db\n{ex}"),
                format!("{WORLD}controller t for Db\n  logic\n    get db = Db key\n    done\n{ex}"),
            ]
        }
        _ => vec![format!("{WORLD}{}\n", e.example)],
    }
}

/// The word of the example that the entry is the row of.
fn own_word(e: &Entry) -> &str {
    let ws: Vec<&str> = e.example.split_whitespace().collect();
    let at = match e.place {
        Place::Statement | Place::ControllerOption => 0,
        Place::Behaviour => 4,
        Place::Expectation => 1,
        Place::Action if ws[0] == "at" => 2,
        Place::Action => {
            // every D N times [from T] ACTION
            if ws.get(4) == Some(&"from") {
                6
            } else {
                4
            }
        }
    };
    ws.get(at).copied().unwrap_or("")
}

#[test]
fn every_row_parses_its_own_example() {
    let entries = syntax::entries();
    assert!(entries.len() > 60, "only {} rows", entries.len());
    listwatch_script::parse(WORLD).unwrap_or_else(|d| panic!("the world: {d:?}"));
    for e in &entries {
        assert_eq!(own_word(e), e.word, "{e:?}: the example uses another word");
        assert!(
            e.usage.split_whitespace().any(|w| w == e.word),
            "{e:?}: the usage does not name its word"
        );
        let results: Vec<_> = scripts(e)
            .iter()
            .map(|s| listwatch_script::parse(s))
            .collect();
        assert!(
            results.iter().any(Result::is_ok),
            "{e:?} does not parse: {:?}",
            results.iter().map(|r| r.as_ref().err()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_vocabulary_lists_are_the_rows_words() {
    let words = |place: Place| -> Vec<&str> {
        syntax::entries()
            .into_iter()
            .filter(|e| e.place == place)
            .map(|e| e.word)
            .collect()
    };
    assert_eq!(syntax::STATEMENTS, words(Place::Statement));
    assert_eq!(syntax::CONTROLLER_OPTIONS, words(Place::ControllerOption));
    assert_eq!(syntax::BEHAVIOURS, words(Place::Behaviour));
    assert_eq!(syntax::ACTIONS, words(Place::Action));
    let expectations = words(Place::Expectation);
    assert!(syntax::COUNTED.iter().all(|c| expectations.contains(c)));
    for list in [
        syntax::STATEMENTS,
        syntax::CONTROLLER_OPTIONS,
        syntax::BEHAVIOURS,
        syntax::ACTIONS,
        &expectations,
    ] {
        let mut sorted = list.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), list.len(), "a word twice in {list:?}");
    }
}

/// Words to try at every place: every word of the language, near misses, and strangers.
fn candidates() -> Vec<String> {
    let lists: [&[&str]; 12] = [
        syntax::STATEMENTS,
        syntax::CONTROLLER_OPTIONS,
        syntax::BEHAVIOURS,
        syntax::ACTIONS,
        syntax::COUNTED,
        syntax::FEATURES,
        syntax::WORDS,
        syntax::LOGIC_STATEMENTS,
        syntax::DESIRED_STATEMENTS,
        syntax::FIELDS,
        syntax::CONDITION_WORDS,
        &[
            "esr", "final", "exists", "absent", "message", "events", "probe", "qq", "Pod", "ctl",
            "op",
        ],
    ];
    let mut out: Vec<String> = vec![];
    for w in lists.iter().flat_map(|l| l.iter()) {
        for c in [w.to_string(), format!("{w}x"), w[1..].to_string()] {
            if !c.is_empty() && !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// Whether the parser refuses `word` at `place` as a word it does not know there.
fn unknown_at(place: Place, word: &str) -> bool {
    let (line, what) = match place {
        Place::Statement => (word.to_string(), "statement"),
        Place::ControllerOption => (
            format!("controller t for Db children Pod\n  {word}"),
            "controller option",
        ),
        Place::Behaviour => (format!("controller t for Db {word} Pod"), "behaviour"),
        Place::Action => (format!("at 1s {word}"), "action"),
        Place::Expectation => (format!("expect {word}"), "expectation"),
    };
    let unknown = format!("unknown {what} `{word}`");
    match listwatch_script::parse(&format!("{WORLD}{line}\n")) {
        Ok(_) => false,
        Err(ds) => ds.iter().any(|d| d.message == unknown),
    }
}

#[test]
fn each_place_reads_exactly_its_vocabulary() {
    let candidates = candidates();
    for place in [
        Place::Statement,
        Place::ControllerOption,
        Place::Behaviour,
        Place::Action,
        Place::Expectation,
    ] {
        let mut vocabulary: Vec<&str> = syntax::entries()
            .into_iter()
            .filter(|e| e.place == place)
            .map(|e| e.word)
            .collect();
        if place == Place::Expectation {
            // `expect CONTROLLER ...`: the world's controllers.
            vocabulary.extend(["ctl", "op"]);
        }
        for w in &vocabulary {
            assert!(candidates.iter().any(|c| c == w), "`{w}` is not tried");
        }
        for c in &candidates {
            let known = vocabulary.contains(&c.as_str());
            assert_eq!(
                !unknown_at(place, c),
                known,
                "{place:?}: `{c}` is {} the vocabulary but the parser {} it",
                if known { "in" } else { "not in" },
                if known { "refuses" } else { "reads" }
            );
        }
    }
}

#[test]
fn every_feature_gate_is_read_and_no_other() {
    for c in candidates() {
        let src = format!("{WORLD}feature {c} on\n");
        let known = syntax::FEATURES.contains(&c.as_str());
        let r = listwatch_script::parse(&src);
        let refused = r.as_ref().err().is_some_and(|ds| {
            ds.iter()
                .any(|d| d.message == format!("unknown feature gate `{c}`"))
        });
        assert_eq!(!refused, known, "feature `{c}`: {r:?}", r = r.err());
    }
}
