//! Big-endian reads at an offset that cannot panic: a short slice reads as zero. Callers check
//! lengths first (a short read is a bug there, not a crash for the user).

fn arr<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(s) = b.get(at..at.saturating_add(N)) {
        a.copy_from_slice(s);
    }
    a
}

pub fn i8_at(b: &[u8], at: usize) -> i8 {
    i8::from_be_bytes(arr(b, at))
}
pub fn i16_at(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes(arr(b, at))
}
pub fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(arr(b, at))
}
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(arr(b, at))
}
