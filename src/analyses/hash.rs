//! The analyses' hash maps and sets, keyed by what the wire says (topic names, member ids,
//! client ids) and looked up for every partition of every message: hashed with foldhash,
//! seeded per run as std's maps are, at a fraction of SipHash's cost (std's SipHash was 8 %
//! of `--analyses` on Metadata answers of hundreds of partitions). Iteration order stays
//! unspecified, as it was: nothing shown depends on it.

pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub(crate) type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
