//! Topic ids to names. Metadata v10+ and DescribeTopicPartitions responses carry both; later
//! messages that carry only an id get the name beside it, in every view.

use super::node::{Node, Value};
use super::Message;
use std::collections::HashMap;

#[derive(Debug, Default, Clone)]
pub struct TopicNames {
    map: HashMap<[u8; 16], String>,
}

const ZERO: [u8; 16] = [0; 16];

impl TopicNames {
    pub fn get(&self, id: &[u8; 16]) -> Option<&str> {
        self.map.get(id).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Learns every (TopicId, Name) pair that sits in one struct, and names every TopicId
    /// already known. Learning comes first so a response names its own ids.
    pub fn observe(&mut self, msg: &mut Message) {
        // Names come from Metadata and DescribeTopicPartitions responses; any message may carry
        // ids to name, once there are names.
        if msg.direction == super::Direction::Response && matches!(msg.api_key, Some(3) | Some(75))
        {
            self.learn(&msg.root);
        }
        if !self.map.is_empty() {
            self.annotate(&mut msg.root);
            msg.refresh_facts();
        }
    }

    fn learn(&mut self, n: &Node) {
        let id = n
            .children
            .iter()
            .find(|c| c.name == "TopicId")
            .and_then(|c| match c.value {
                Value::Uuid(u) if u != ZERO => Some(u),
                _ => None,
            });
        let name = n
            .children
            .iter()
            .find(|c| (c.name == "Name" || c.name == "TopicName") && c.ty == "string")
            .and_then(|c| c.as_str())
            .filter(|s| !s.is_empty());
        if let (Some(id), Some(name)) = (id, name) {
            self.map.insert(id, name.to_string());
        }
        for c in &n.children {
            self.learn(c);
        }
    }

    /// Names the topic ids of structs that do not carry the name themselves.
    fn annotate(&self, n: &mut Node) {
        let named = n.children.iter().any(|c| {
            (c.name == "Name" || c.name == "TopicName") && c.as_str().is_some_and(|s| !s.is_empty())
        });
        for c in n.children.iter_mut() {
            if let Value::Uuid(u) = c.value {
                if !named && c.note == super::node::Note::None {
                    if let Some(name) = self.map.get(&u) {
                        c.note = super::node::Note::TopicName(name.clone());
                    }
                }
            }
            self.annotate(c);
        }
    }
}
