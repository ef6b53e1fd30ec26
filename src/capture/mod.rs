//! Input: capture files and hex text, turned into packets or bytes.

pub mod hex;
