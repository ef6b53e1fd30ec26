//! The two sides of a TCP connection, and one value per side indexed by [`Side`]: a side is
//! never a number, so there is no out-of-range side to check for (or to panic on).

use std::ops::{Index, IndexMut};

/// One side of a connection: `A` sent from the first address the connection was seen with,
/// `B` from the other.
/// Ordered `A` before `B`, as the numbers 0 and 1 they replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    A,
    B,
}

impl Side {
    /// Both sides, `A` first.
    pub const BOTH: [Side; 2] = [Side::A, Side::B];

    /// The side that receives what this one sends.
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// One value per side of a connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sides<T> {
    a: T,
    b: T,
}

impl<T> Sides<T> {
    pub fn new(a: T, b: T) -> Sides<T> {
        Sides { a, b }
    }

    /// The values, `A`'s first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        [&self.a, &self.b].into_iter()
    }

    /// The values, `A`'s first, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        [&mut self.a, &mut self.b].into_iter()
    }
}

impl<T: PartialEq> Sides<T> {
    /// The side whose value is `x`: `A` when it is `A`'s, else `B` (so a value of neither side
    /// counts as `B`'s, as the number `usize::from(a != x)` did).
    pub fn side_of(&self, x: &T) -> Side {
        if self.a == *x {
            Side::A
        } else {
            Side::B
        }
    }

    /// The side whose value is `x`, if either's is.
    pub fn side_of_checked(&self, x: &T) -> Option<Side> {
        if self.a == *x {
            Some(Side::A)
        } else if self.b == *x {
            Some(Side::B)
        } else {
            None
        }
    }
}

impl<T> Index<Side> for Sides<T> {
    type Output = T;

    fn index(&self, side: Side) -> &T {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }
}

impl<T> IndexMut<Side> for Sides<T> {
    fn index_mut(&mut self, side: Side) -> &mut T {
        match side {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_indexes_its_own_value() {
        let mut s = Sides::new(1, 2);
        s[Side::B] += 10;
        assert_eq!((s[Side::A], s[Side::B]), (1, 12));
        assert_eq!(s.side_of(&12), Side::B);
        assert_eq!(s.side_of(&1), Side::A);
        assert_eq!(Side::A.other(), Side::B);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![1, 12]);
    }
}
