//! Problems in words: the paths, and the details the decoder records as data.

use crate::kafka::problem::{Path, Step};
use std::fmt;

/// `Topics[0].Partitions[2].ErrorCode`: field names joined by dots, element indices in
/// brackets.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in self.steps() {
            match s {
                Step::Field(id) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(id.name())?;
                }
                Step::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}
