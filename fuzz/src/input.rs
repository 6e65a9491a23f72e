//! Structured reads from a fuzz input: every read succeeds (zeros once the
//! input ran out), so any byte string is a valid input.

/// A fuzz input, read front to back.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// Up to `n` bytes (fewer when the input runs out).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        taken
    }

    /// A byte string whose length is the next byte.
    pub fn short(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte());
        self.bytes(n)
    }

    /// Everything not read yet.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Cuts `data` into chunks whose sizes cycle through `sizes` (each plus
/// one, times `scale`): the same bytes as a socket might deliver them.
pub fn chunks<'a>(data: &'a [u8], sizes: &[u8], scale: usize) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0;
    while !rest.is_empty() {
        let size = match sizes.get(i % sizes.len().max(1)) {
            Some(&s) => (usize::from(s) + 1) * scale,
            None => rest.len(),
        };
        let (chunk, after) = rest.split_at(size.min(rest.len()));
        out.push(chunk);
        rest = after;
        i += 1;
    }
    out
}
