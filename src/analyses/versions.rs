//! Version negotiation per client software: the name and version a client gives in its
//! ApiVersions request (v3+), and for each API it used, the versions chosen against the
//! highest the broker it sent them to advertised; answers in a layout other than the version
//! asked (an ApiVersions answer of UNSUPPORTED_VERSION comes in the v0 layout; an answer that
//! does not read at the version asked, to a version the broker did not advertise); and
//! requests for versions the broker did not advertise.

use super::adapter::Event;
use super::MAX_KEYS;
use crate::kafka::message::api_display_name;
use crate::render::table::{Cell, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};

const UNSUPPORTED_VERSION: i16 = 35;

/// What one client software did with one API.
#[derive(Debug, Default, Clone)]
pub struct ApiUse {
    pub versions: BTreeSet<i16>,
    /// The highest version the brokers it sent them to advertised (the lowest of those).
    pub broker_max: Option<i64>,
    pub not_advertised: u64,
    pub other_layout: u64,
    /// Frames of the requests for versions not advertised, and answers in another layout.
    pub frames: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct Versions {
    /// Software by stream, and by client (address and client_id) for streams that sent no
    /// ApiVersions v3+.
    by_stream: HashMap<u32, (String, String)>,
    by_client: HashMap<(IpAddr, String), (String, String)>,
    /// Advertised ranges by broker node.
    advertised: HashMap<SocketAddr, BTreeMap<i16, (i64, i64)>>,
    /// Requests held until the software of their stream is known: (stream, event essentials).
    pub uses: BTreeMap<(String, String), BTreeMap<i16, ApiUse>>,
    pub client_ids: BTreeMap<(String, String), BTreeSet<String>>,
}

impl Versions {
    fn software(&self, e: &Event) -> (String, String) {
        if let Some(s) = self.by_stream.get(&e.stream) {
            return s.clone();
        }
        let ip = e.client.map(|c| c.ip());
        ip.and_then(|ip| self.by_client.get(&(ip, e.client_id.clone())))
            .cloned()
            .unwrap_or_else(|| ("unknown".into(), "-".into()))
    }

    fn use_of(&mut self, sw: (String, String), key: i16) -> Option<&mut ApiUse> {
        if self.uses.len() >= MAX_KEYS && !self.uses.contains_key(&sw) {
            return None;
        }
        Some(self.uses.entry(sw).or_default().entry(key).or_default())
    }

    pub fn request(&mut self, e: &Event) {
        if let Some(sw) = &e.software {
            if self.by_stream.len() < MAX_KEYS {
                self.by_stream.insert(e.stream, sw.clone());
            }
            if let (Some(c), true) = (e.client, self.by_client.len() < MAX_KEYS) {
                self.by_client
                    .insert((c.ip(), e.client_id.clone()), sw.clone());
            }
        }
        let sw = self.software(e);
        let adv = e
            .broker
            .and_then(|b| self.advertised.get(&b))
            .and_then(|a| a.get(&e.api_key).copied());
        let known = e.broker.is_some_and(|b| self.advertised.contains_key(&b));
        if self.client_ids.len() < MAX_KEYS || self.client_ids.contains_key(&sw) {
            self.client_ids
                .entry(sw.clone())
                .or_default()
                .insert(e.client_id.clone());
        }
        let (key, version, frame) = (e.api_key, e.api_version, e.frame);
        let Some(u) = self.use_of(sw, key) else {
            return;
        };
        u.versions.insert(version);
        if let Some((_, hi)) = adv {
            u.broker_max = Some(u.broker_max.map_or(hi, |m| m.min(hi)));
        }
        let outside = adv.is_none_or(|(lo, hi)| !(lo..=hi).contains(&i64::from(version)));
        // ApiVersions is asked before the answer is known: its version is a guess by design.
        if known && outside && key != 18 {
            u.not_advertised += 1;
            if u.frames.len() < 10 {
                u.frames.push(frame);
            }
        }
    }

    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        if let (Some(list), false, Some(b)) = (&e.advertised, e.malformed, e.broker) {
            if self.advertised.len() < MAX_KEYS || self.advertised.contains_key(&b) {
                let m = list.iter().map(|&(k, lo, hi)| (k, (lo, hi))).collect();
                self.advertised.insert(b, m);
            }
        }
        let Some(req) = req else { return };
        let v0_answer = e.api_key == 18 && e.error == Some(UNSUPPORTED_VERSION);
        let adv = e
            .broker
            .and_then(|b| self.advertised.get(&b))
            .and_then(|a| a.get(&e.api_key).copied());
        let unadvertised = adv.is_some_and(|(_, hi)| i64::from(req.api_version) > hi);
        if v0_answer || (e.malformed && unadvertised) {
            let sw = self.software(req);
            if let Some(u) = self.use_of(sw, e.api_key) {
                u.other_layout += 1;
                if u.frames.len() < 10 {
                    u.frames.push(e.frame);
                }
            }
        }
    }

    /// Whether a use is older than what the broker offers.
    pub fn older(u: &ApiUse) -> bool {
        match (u.versions.iter().next_back(), u.broker_max) {
            (Some(v), Some(m)) => i64::from(*v) < m,
            _ => false,
        }
    }

    fn status(u: &ApiUse) -> String {
        let used = u.versions.iter().next_back().copied().unwrap_or(-1);
        let mut s = match u.broker_max {
            None => "no ApiVersions answer of the broker".to_string(),
            Some(m) if i64::from(used) == m => "the newest the broker offers".into(),
            Some(m) if i64::from(used) < m => format!("older than the broker offers (v{m})"),
            Some(m) => format!("newer than the broker offers (v{m})"),
        };
        if u.not_advertised > 0 {
            s.push_str(&format!(
                "; {} requests for versions not advertised",
                u.not_advertised
            ));
        }
        if u.other_layout > 0 {
            s.push_str(&format!("; {} answers in another layout", u.other_layout));
        }
        s
    }

    pub fn tables(&self, width: Option<u16>) -> Vec<(String, String)> {
        if self.uses.is_empty() {
            return Vec::new();
        }
        let mut g = Grid::new(&[
            "software",
            "client_id",
            "API",
            "used",
            "broker max",
            "status",
        ]);
        for ((name, version), apis) in &self.uses {
            let ids: Vec<&str> = self
                .client_ids
                .get(&(name.clone(), version.clone()))
                .map(|s| s.iter().map(String::as_str).collect())
                .unwrap_or_default();
            for (key, u) in apis {
                let used: Vec<String> = u.versions.iter().map(|v| format!("v{v}")).collect();
                g.row(vec![
                    Cell::atom(format!("{name} {version}")),
                    Cell::text(ids.join(" ")),
                    Cell::atom(format!("{} ({key})", api_display_name(*key))),
                    Cell::atom(used.join(" ")),
                    Cell::num(u.broker_max.map_or("-".into(), |m| format!("v{m}"))),
                    Cell::text(Self::status(u)),
                ]);
            }
        }
        vec![(
            "Version negotiation per client software".into(),
            g.render(width).to_string(),
        )]
    }

    /// Every client software, by name and version.
    pub fn out(&self) -> Vec<ClientVersionsOut> {
        self.uses
            .iter()
            .map(|((name, version), apis)| ClientVersionsOut {
                software: name.clone(),
                version: version.clone(),
                client_ids: self
                    .client_ids
                    .get(&(name.clone(), version.clone()))
                    .map(|s| s.iter().cloned().collect()),
                apis: apis
                    .iter()
                    .map(|(k, u)| ApiUseOut {
                        api_key: *k,
                        api_name: api_display_name(*k).into_owned(),
                        versions: u.versions.iter().copied().collect(),
                        broker_max: u.broker_max,
                        older_than_broker: Self::older(u),
                        not_advertised: u.not_advertised,
                        other_layout: u.other_layout,
                        frames: u.frames.clone(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// One client software (an element of `client_versions` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct ClientVersionsOut {
    /// The name and version its ApiVersions request gave; `unknown` and `-` when none.
    pub software: String,
    pub version: String,
    /// The client_ids of its requests, sorted.
    pub client_ids: Option<Vec<String>>,
    /// By API key.
    pub apis: Vec<ApiUseOut>,
}

/// What one client software did with one API.
#[derive(Debug, Clone, Serialize)]
pub struct ApiUseOut {
    pub api_key: i16,
    pub api_name: String,
    /// The versions used, ascending.
    pub versions: Vec<i16>,
    /// The highest version the brokers it sent them to advertised (the lowest of those).
    pub broker_max: Option<i64>,
    pub older_than_broker: bool,
    pub not_advertised: u64,
    pub other_layout: u64,
    /// Frames of requests for versions not advertised, and of answers in another layout.
    pub frames: Vec<u64>,
}
