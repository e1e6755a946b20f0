//! Wire types: what travels on the queues. Versioned (`v`) and separate from the domain
//! types, so a message written by one release is understood by the next. A message names a
//! database row; the row carries the data.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use jobwire_core::{DeliveryId, PostId};

use crate::Topic;

/// The current wire version written by this build.
pub const WIRE_VERSION: u16 = 1;

/// A type that travels on one topic.
pub trait WireMessage: Serialize + DeserializeOwned {
    const TOPIC: Topic;
    const NAME: &'static str;
    /// The wire version the message was written with (its `v`).
    fn version(&self) -> u16;
}

/// A post passed intake and waits for classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostReady {
    pub v: u16,
    pub post_id: PostId,
}

/// A post was classified as a job and waits for fan-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReady {
    pub v: u16,
    pub post_id: PostId,
}

/// A delivery row waits to be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryReady {
    pub v: u16,
    pub delivery_id: DeliveryId,
}

impl PostReady {
    pub fn new(post_id: impl Into<PostId>) -> Self {
        Self {
            v: WIRE_VERSION,
            post_id: post_id.into(),
        }
    }
}
impl JobReady {
    pub fn new(post_id: impl Into<PostId>) -> Self {
        Self {
            v: WIRE_VERSION,
            post_id: post_id.into(),
        }
    }
}
impl DeliveryReady {
    pub fn new(delivery_id: impl Into<DeliveryId>) -> Self {
        Self {
            v: WIRE_VERSION,
            delivery_id: delivery_id.into(),
        }
    }
}

impl WireMessage for PostReady {
    const TOPIC: Topic = Topic::Classify;
    const NAME: &'static str = "PostReady";
    fn version(&self) -> u16 {
        self.v
    }
}
impl WireMessage for JobReady {
    const TOPIC: Topic = Topic::Fanout;
    const NAME: &'static str = "JobReady";
    fn version(&self) -> u16 {
        self.v
    }
}
impl WireMessage for DeliveryReady {
    const TOPIC: Topic = Topic::Send;
    const NAME: &'static str = "DeliveryReady";
    fn version(&self) -> u16 {
        self.v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_format_is_stable() {
        let json = serde_json::to_string(&DeliveryReady::new(7)).expect("serializes");
        assert_eq!(json, r#"{"v":1,"delivery_id":7}"#);
        let back: PostReady = serde_json::from_str(r#"{"v":1,"post_id":3}"#).expect("parses");
        assert_eq!(back.post_id, PostId(3));
    }
}
