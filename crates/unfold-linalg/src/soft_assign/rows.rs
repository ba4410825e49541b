//! The rows of `R` in compressed form, block by block, stored by their first position.

/// Consecutive rows of `R` in compressed form, columns as positions (ascending per row).
#[derive(Default)]
pub(super) struct Block {
    /// Row `i` of the block holds entries `ptr[i]..ptr[i + 1]`.
    pub(super) ptr: Vec<usize>,
    pub(super) pos: Vec<u32>,
    pub(super) val: Vec<f64>,
    /// The point (counted from the block's first) of each stored row. Rows are stored by
    /// their first position, so that consecutive rows update nearby accumulator rows.
    pub(super) point: Vec<u32>,
}

impl Block {
    pub(super) fn rows(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Stores the rows (given in point order) by their first position (a stable counting
    /// sort; empty rows last).
    #[cfg(test)]
    pub(super) fn sort_rows(&mut self, k: usize) {
        let mut sorted = Block::default();
        self.sort_rows_into(k, &mut sorted);
        *self = sorted;
    }

    /// The rows (given in point order) stored by their first position into `sorted`
    /// (whose buffers are reused).
    pub(super) fn sort_rows_into(&self, k: usize, sorted: &mut Block) {
        let rows = self.rows();
        let first = |i: usize| {
            let start = self.ptr[i];
            if start < self.ptr[i + 1] {
                self.pos[start] as usize
            } else {
                k
            }
        };
        let mut starts = vec![0usize; k + 2];
        for i in 0..rows {
            starts[first(i) + 1] += 1;
        }
        for j in 1..starts.len() {
            starts[j] += starts[j - 1];
        }
        sorted.point.clear();
        sorted.point.resize(rows, 0);
        for i in 0..rows {
            let slot = &mut starts[first(i)];
            sorted.point[*slot] = i as u32;
            *slot += 1;
        }
        sorted.ptr.clear();
        sorted.pos.clear();
        sorted.val.clear();
        sorted.ptr.push(0);
        for &i in &sorted.point {
            let (pos, val) = self.row(i as usize);
            sorted.pos.extend_from_slice(pos);
            sorted.val.extend_from_slice(val);
            sorted.ptr.push(sorted.val.len());
        }
    }

    /// Empties the block for rows in point order (keeping its buffers).
    pub(super) fn clear(&mut self) {
        self.ptr.clear();
        self.ptr.push(0);
        self.pos.clear();
        self.val.clear();
        self.point.clear();
    }

    pub(super) fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let range = self.ptr[i]..self.ptr[i + 1];
        (&self.pos[range.clone()], &self.val[range])
    }
}
