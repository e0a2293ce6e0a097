// The explorer's Web Worker (src/bin/explore_worker.rs), started and spoken to here only: the
// explorer, Compare, the export, the import, the objects panel and the sequence view each ask
// `ask` for a job. The messages themselves are protocol.rs's (a `ToWorker` out, `FromWorker`s
// back; its tests pin their shapes): this module adds what the protocol leaves to the page.
//
// - Request ids. A lane sends its worker one job at a time, the next when the last message of
//   the one before came (its answer or an `error`, after any number of `progress` reports): so a
//   message is about the lane's first job, and no id travels. The jobs waiting stay here, where
//   dropping one costs nothing.
// - Lanes. Each part of the page has a lane (`'explore'`, `'objects'`, ...) with a worker of its
//   own, so a long search never holds up an export. A lane asked to `keep` its worker keeps it
//   between jobs (V8 compiles a new worker's wasm in tiers, and a search in a fresh worker runs
//   mostly in the baseline tier, about 3x slower); the others end it when their last job is
//   answered.
// - Cancel. A job not sent yet is dropped; one the worker is on stops only with its worker, so the
//   worker is ended and a new one takes the lane's jobs still waiting.
// - Errors. A worker that cannot start, cannot load its wasm or traps fails every job it held.
// - A limit: at most IN_FLIGHT_MAX jobs a lane; a new one past it refuses the oldest job still
//   waiting, which is stale by then (the objects panel asks for a table on every step of the
//   clock), never the one the worker is on: that would end the worker the lane keeps warm.

const LOADER = './explore_worker_loader.js';
export const IN_FLIGHT_MAX = 4;

/// lane name -> { worker, ready, keep, jobs: [{ id, job, sent, onProgress, resolve, reject }] }
const lanes = new Map();
let ids = 0;

/// A job that did not get its answer: `why` is `start` (no worker), `stopped` (it crashed or
/// failed to load; `message` says how), `cancelled` or `refused` (past the limit).
const failure = (why, message) => Object.assign(new Error(message), { why });

function worker(name, lane) {
  let w;
  try { w = new Worker(LOADER); } catch { return fail(lane, 'start', 'it could not start'); }
  Object.assign(lane, { worker: w, ready: false });
  w.onmessage = (e) => {
    if (lane.worker !== w) return;
    const m = e.data;
    if (m.kind === 'ready') { lane.ready = true; return send(lane); }
    const j = lane.jobs[0];
    if (!j?.sent) return;
    if (m.kind === 'progress') return j.onProgress?.(m);
    lane.jobs.shift();
    j.resolve(m);
    if (!lane.keep && !lane.jobs.length) end(name, lane);
    else send(lane);
  };
  w.onerror = (e) => {
    e.preventDefault?.();
    if (lane.worker !== w) return;
    end(name, lane);
    fail(lane, 'stopped', e.message || 'it failed to load or crashed');
  };
}

/// Sends the lane's first job if the worker is ready and on none: only the first is ever sent.
function send(lane) {
  const j = lane.jobs[0];
  if (!lane.ready || !j || j.sent) return;
  j.sent = true;
  lane.worker.postMessage(j.job);
}

function fail(lane, why, message) {
  for (const j of lane.jobs.splice(0)) j.reject(failure(why, message));
}

function end(name, lane) {
  lane.worker?.terminate();
  lane.worker = null;
  if (!lane.jobs.length) lanes.delete(name);
}

/// Runs `job` (a `ToWorker`) on lane `name`; `onProgress` hears its progress reports. Returns its
/// id, `answer` (a promise of the last `FromWorker`, an `error` included; rejected with a
/// `failure` when there is none) and `cancel()`.
export function ask(name, job, { onProgress, keep = false } = {}) {
  if (!lanes.has(name)) lanes.set(name, { worker: null, ready: false, keep, jobs: [] });
  const lane = lanes.get(name);
  lane.keep = keep;
  const id = ++ids;
  const answer = new Promise((resolve, reject) => lane.jobs.push({ id, job, sent: false, onProgress, resolve, reject }));
  if (lane.jobs.length > IN_FLIGHT_MAX) cancelJob(name, lane.jobs[lane.jobs[0].sent ? 1 : 0].id, 'refused');
  if (lane.worker) send(lane); else worker(name, lane);
  return { id, answer, cancel: () => cancelJob(name, id, 'cancelled') };
}

function cancelJob(name, id, why) {
  const lane = lanes.get(name);
  const i = lane?.jobs.findIndex((j) => j.id === id) ?? -1;
  if (i < 0) return;
  const [j] = lane.jobs.splice(i, 1);
  j.reject(failure(why, why === 'refused' ? 'too many jobs at once' : 'cancelled'));
  if (!j.sent) return;
  // The worker is on it: only ending the worker stops it. A new worker takes the jobs waiting,
  // if any are left.
  const rest = lane.jobs;
  lane.jobs = [];
  end(name, lane);
  if (!rest.length) return;
  lanes.set(name, Object.assign(lane, { jobs: rest }));
  worker(name, lane);
}

/// Ends lane `name`'s worker and fails its jobs (`cancelled`): the reader closed what asked.
export function stop(name) {
  const lane = lanes.get(name);
  if (!lane) return;
  const jobs = lane.jobs.splice(0);
  end(name, lane);
  for (const j of jobs) j.reject(failure('cancelled', 'cancelled'));
}

/// Whether lane `name` has a job the worker is on or will be.
export const busy = (name) => !!lanes.get(name)?.jobs.length;
