//! Counts in prose: "1 frame", "2 frames", so that no line says "1 frames".

/// `n` and the noun, plural unless `n` is 1: `count(1, "frame")` is "1 frame",
/// `count(3, "frame")` "3 frames". Nouns whose plural is not the noun and `s` go through
/// [`count_as`].
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// As [`count`], with the plural given.
pub fn count_as(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "frame"), "1 frame");
        assert_eq!(count(0, "frame"), "0 frames");
        assert_eq!(count(2, "byte"), "2 bytes");
        assert_eq!(count_as(1, "was", "were"), "1 was");
        assert_eq!(count_as(5, "was", "were"), "5 were");
    }
}
