//! Where the picture's parts go (`system`): the watch caches' rings in a row at the top, spread
//! over the width; one row per watcher under them; the work queues at the bottom, sharing the
//! width. A link leaves its cache's ring at the bottom, runs along a channel of its own under
//! the rings and down a lane of its own right of the watchers' rows, and enters its watcher's row
//! from the right: it crosses no state pill and no other row's text, and two links never share
//! a stretch, so a message's dot is always on its own link.

/// A ring's column at the narrowest.
pub const RING_W_MIN: f64 = 170.0;
/// A ring's column at the widest: wider rings would only spread out.
const RING_W_MAX: f64 = 240.0;
/// The bottom of the rings' hit boxes.
const RINGS_BOTTOM: f64 = 214.0;
/// Channels under the rings: the first one's y and the step between two.
const CHANNEL_Y0: f64 = 220.0;
const CHANNEL_STEP: f64 = 6.0;
/// A watcher's row: its height (with the gap to the next) and how far right it reaches.
pub const ROW_H: f64 = 70.0;
pub const ROW_RIGHT: f64 = 662.0;
/// Lanes right of the rows: the first one's x and the step between two.
const LANE_X0: f64 = 672.0;
const LANE_STEP: f64 = 8.0;
/// A queue's box (three lanes: waiting, running, done; then its dirty keys and last write): its
/// height, with the gap under it, and its width at the narrowest.
pub const QUEUE_BOX_H: f64 = 116.0;
const QUEUE_H: f64 = QUEUE_BOX_H + 8.0;
pub const QUEUE_W_MIN: f64 = 292.0;
/// Queues a row holds at most.
pub const QUEUE_COLS_MAX: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// The picture's size, in its units.
    pub width: f64,
    pub height: f64,
    /// Each ring's column, and where the first one starts.
    pub ring_w: f64,
    rings_x0: f64,
    /// The first watcher row's top.
    pub rows_top: f64,
    /// The first queue row's top.
    pub queues_y: f64,
    queue_cols: usize,
    /// A queue box's width.
    pub queue_w: f64,
}

impl Layout {
    /// The layout of `rings` caches, `watchers` watchers and `queues` controllers.
    pub fn new(rings: usize, watchers: usize, queues: usize) -> Layout {
        let queue_cols = queues.clamp(1, QUEUE_COLS_MAX);
        let lanes_right = LANE_X0 + LANE_STEP * watchers.saturating_sub(1) as f64 + 12.0;
        let width = (40.0 + RING_W_MIN * rings as f64)
            .max(lanes_right)
            .max(20.0 + (QUEUE_W_MIN + 8.0) * queue_cols as f64);
        let ring_w = ((width - 40.0) / rings.max(1) as f64).clamp(RING_W_MIN, RING_W_MAX);
        let rings_x0 = (width - ring_w * rings as f64) / 2.0;
        let rows_top = CHANNEL_Y0 + CHANNEL_STEP * watchers as f64 + 12.0;
        let queues_y = rows_top + ROW_H * watchers as f64 + 5.0;
        let queue_w = (width - 20.0) / queue_cols as f64 - 8.0;
        let queue_rows = queues.max(1).div_ceil(queue_cols);
        let height = queues_y + QUEUE_H * queue_rows as f64 + 17.0;
        Layout {
            width,
            height,
            ring_w,
            rings_x0,
            rows_top,
            queues_y,
            queue_cols,
            queue_w,
        }
    }

    /// The centre of ring `i` (apiserver-major: an apiserver's caches side by side).
    pub fn ring_cx(&self, i: usize) -> f64 {
        self.rings_x0 + self.ring_w * i as f64 + self.ring_w / 2.0
    }

    /// The top of watcher `i`'s row.
    pub fn row_y(&self, i: usize) -> f64 {
        self.rows_top + ROW_H * i as f64
    }

    /// Queue `i`'s box: its left edge and top.
    pub fn queue_at(&self, i: usize) -> (f64, f64) {
        let (col, row) = (i % self.queue_cols, i / self.queue_cols);
        (
            20.0 + (self.queue_w + 8.0) * col as f64,
            self.queues_y + QUEUE_H * row as f64,
        )
    }

    /// Whether queue `i` is the last of its row.
    pub fn last_in_row(&self, i: usize, queues: usize) -> bool {
        i % self.queue_cols == self.queue_cols - 1 || i + 1 == queues
    }

    /// Watcher `i`'s link to ring `ring`, from the ring to the watcher's row: down out of the
    /// ring, along its channel, down its lane and into the row.
    pub fn link_path(&self, ring: usize, i: usize) -> [(f64, f64); 5] {
        let cx = self.ring_cx(ring);
        let channel = CHANNEL_Y0 + CHANNEL_STEP * i as f64;
        let lane = LANE_X0 + LANE_STEP * i as f64;
        let row = self.row_y(i) + 19.0;
        [
            (cx, RINGS_BOTTOM),
            (cx, channel),
            (lane, channel),
            (lane, row),
            (ROW_RIGHT - 4.0, row),
        ]
    }
}

/// The point `p` (0 to 1) of the way along a path.
pub fn along(path: &[(f64, f64)], p: f64) -> (f64, f64) {
    let len = |a: (f64, f64), b: (f64, f64)| (b.0 - a.0).abs() + (b.1 - a.1).abs();
    let total: f64 = path.windows(2).map(|w| len(w[0], w[1])).sum();
    let mut left = total * p.clamp(0.0, 1.0);
    for w in path.windows(2) {
        let l = len(w[0], w[1]);
        if left <= l && l > 0.0 {
            let f = left / l;
            return (
                w[0].0 + (w[1].0 - w[0].0) * f,
                w[0].1 + (w[1].1 - w[0].1) * f,
            );
        }
        left -= l;
    }
    path.last().copied().unwrap_or_default()
}

/// A path as an SVG polyline's points.
pub fn points(path: &[(f64, f64)]) -> String {
    path.iter()
        .map(|(x, y)| format!("{},{}", super::num(*x), super::num(*y)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    /// Paths are made of horizontal and vertical stretches (so `along` measures them exactly),
    /// and two links never share a stretch: their channels and lanes differ.
    #[wasm_bindgen_test]
    fn links_run_apart_and_along_them_is_exact() {
        let l = Layout::new(4, 6, 5);
        for i in 0..6 {
            let p = l.link_path(i % 4, i);
            for w in p.windows(2) {
                assert!(w[0].0 == w[1].0 || w[0].1 == w[1].1, "{p:?}");
            }
            assert_eq!(along(&p, 0.0), p[0]);
            assert_eq!(along(&p, 1.0), p[4]);
            for j in 0..i {
                let q = l.link_path(j % 4, j);
                assert!(p[1].1 != q[1].1 && p[2].0 != q[2].0);
            }
            // Right of every state pill (the last ends at 654) and under the rings.
            assert!(p[2].0 > 654.0 && p[1].1 > 214.0 && p[1].1 < l.rows_top);
        }
        assert!(l.queues_y >= l.row_y(5) + ROW_H);
        // A queue's box starts 8 left of its text.
        let (x, _) = l.queue_at(2);
        assert!(
            x - 8.0 + l.queue_w <= l.width - 12.0,
            "the queues fit the width"
        );
    }
}
