//! Input: capture files and hex text, turned into packets, TCP segments or bytes.

pub mod hex;
pub mod net;
pub mod pcap;
