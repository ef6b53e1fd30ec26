//! "Did you mean": the known names nearest to a misspelt one.

/// Edit distance (insertions, deletions, substitutions, and swaps of two neighbours, the
/// commonest typo), ignoring case: a name typed in the wrong case is at distance 0.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let w = b.len() + 1;
    // d[i * w + j]: distance between the first i characters of a and the first j of b.
    let mut d: Vec<usize> = vec![0; (a.len() + 1) * w];
    let at =
        |d: &Vec<usize>, i: usize, j: usize| d.get(i * w + j).copied().unwrap_or(usize::MAX / 2);
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            let v = if i == 0 || j == 0 {
                i + j
            } else {
                let (ca, cb) = (a.get(i - 1), b.get(j - 1));
                let mut v = (at(&d, i - 1, j - 1) + usize::from(ca != cb))
                    .min(at(&d, i - 1, j) + 1)
                    .min(at(&d, i, j - 1) + 1);
                if i > 1 && j > 1 && ca == b.get(j - 2) && a.get(i - 2) == cb {
                    v = v.min(at(&d, i - 2, j - 2) + 1);
                }
                v
            };
            if let Some(cell) = d.get_mut(i * w + j) {
                *cell = v;
            }
        }
    }
    at(&d, a.len(), b.len())
}

/// Up to three candidates close enough to `wrong` (about one edit in three characters),
/// nearest first, then ones that `wrong` begins (`NOT_LEADER` for `NOT_LEADER_OR_FOLLOWER`).
pub(crate) fn nearest<'a>(
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    // A name this long is no typo of a field; and the distance costs its length squared.
    if wrong.len() > 100 {
        return Vec::new();
    }
    let limit = (wrong.chars().count() / 3).max(1);
    let lower = wrong.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = distance(wrong, c);
            let prefix = lower.chars().count() >= 3 && c.to_lowercase().starts_with(&lower);
            match (d <= limit, prefix) {
                (true, _) => Some((d, c)),
                (false, true) => Some((limit + 1, c)),
                _ => None,
            }
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// The API names nearest to one that is no API's. Names are matched ignoring case and
/// separators (`describe-cluster` is `DescribeCluster`), so the separators are left out
/// before measuring: `metdata` and `describe-clustr` are one edit from their API.
/// Only the nearest are named (`describe-clustr` gets `DescribeCluster`, not also
/// `DescribeAcls`); with none near, the names it begins, if any.
pub(crate) fn nearest_api(wrong: &str) -> Vec<&'static str> {
    let squashed: String = wrong.chars().filter(|c| c.is_alphanumeric()).collect();
    let names = || crate::kafka::names::API_NAMES.iter().map(|(_, n)| *n);
    if squashed.len() > 100 {
        return Vec::new();
    }
    let limit = (squashed.chars().count() / 3).max(1);
    let scored: Vec<(usize, &'static str)> = names()
        .map(|n| (distance(&squashed, n), n))
        .filter(|(d, _)| *d <= limit)
        .collect();
    match scored.iter().map(|(d, _)| *d).min() {
        Some(best) => scored
            .into_iter()
            .filter(|(d, _)| *d == best)
            .map(|(_, n)| n)
            .take(3)
            .collect(),
        None => nearest(&squashed, names()),
    }
}

/// `; did you mean `x`?`, `; did you mean `x`, `y` or `z`?`, or nothing.
pub(crate) fn did_you_mean(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("laytency", "latency"), 1);
        assert_eq!(distance("Latency", "latency"), 0);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("prot", "port"), 1);
    }

    #[test]
    fn suggestions() {
        let names = ["latency", "topic", "partition", "port", "api"];
        assert_eq!(nearest("laytency", names), vec!["latency"]);
        assert_eq!(nearest("prot", names), vec!["port"]);
        assert_eq!(nearest("xyzzy", names), Vec::<&str>::new());
        assert_eq!(nearest("part", names), vec!["port", "partition"]);
        assert_eq!(
            nearest("NOT_LEADER", ["NOT_LEADER_OR_FOLLOWER", "NOT_CONTROLLER"]),
            vec!["NOT_LEADER_OR_FOLLOWER"]
        );
        assert_eq!(did_you_mean(&["a"]), "; did you mean `a`?");
        assert_eq!(
            did_you_mean(&["a", "b", "c"]),
            "; did you mean `a`, `b` or `c`?"
        );
        assert_eq!(did_you_mean(&[]), "");
    }

    #[test]
    fn api_names_ignore_case_and_separators() {
        assert_eq!(nearest_api("metdata"), vec!["Metadata"]);
        assert_eq!(nearest_api("METDATA"), vec!["Metadata"]);
        assert_eq!(nearest_api("describe-clustr"), vec!["DescribeCluster"]);
        assert_eq!(nearest_api("api_verions"), vec!["ApiVersions"]);
        assert_eq!(nearest_api("xyzzy"), Vec::<&str>::new());
        assert_eq!(nearest_api("describe-configs"), vec!["DescribeConfigs"]);
        assert_eq!(
            nearest_api("consumer-group"),
            vec!["ConsumerGroupDescribe", "ConsumerGroupHeartbeat"]
        );
    }
}
