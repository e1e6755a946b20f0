//! Wire types: what travels on the queues. Versioned (`v`) and separate from the domain
//! types, so a message written by one release is understood by the next. A message names a
//! database row; the row carries the data.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use jobwire_core::{DeliveryId, PostId};

use crate::Topic;

/// The highest wire version of any message this build reads (each type has its own,
/// [`WireMessage::MAX_VERSION`]). Each message is written with the version of its shape: 1
/// for every message, 2 for a [`DeliveryReady`] that names several deliveries (which a build
/// that reads only 1 refuses, and dead-letters, instead of sending the first delivery and
/// silently dropping the others: upgrade the senders before the dispatchers).
pub const WIRE_VERSION: u16 = 2;

/// The version of a message that names one row.
const V1: u16 = 1;

/// The most deliveries one [`DeliveryReady`] names: the fan-out publishes its deliveries in
/// runs of this many, so the broker carries one message (a publish, a confirm, a delivery
/// and an ack) per run instead of per delivery.
pub const MAX_DELIVERY_BATCH: usize = 64;

/// A type that travels on one topic.
pub trait WireMessage: Serialize + DeserializeOwned {
    const TOPIC: Topic;
    const NAME: &'static str;
    /// The highest version of this type this build reads (a higher one is refused).
    const MAX_VERSION: u16 = V1;
    /// The wire version the message was written with (its `v`).
    fn version(&self) -> u16;
    /// Why a message that parsed is still not one this build writes, if it is not.
    fn malformed(&self) -> Option<String> {
        None
    }
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

/// Delivery rows wait to be sent: `delivery_id`, then `more` (version 2; empty and left out
/// in version 1). The rows are independent: each is sent, skipped or retried on its own, and
/// the message is settled once every one of them is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryReady {
    pub v: u16,
    pub delivery_id: DeliveryId,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<DeliveryId>,
}

impl PostReady {
    pub fn new(post_id: impl Into<PostId>) -> Self {
        Self {
            v: V1,
            post_id: post_id.into(),
        }
    }
}
impl JobReady {
    pub fn new(post_id: impl Into<PostId>) -> Self {
        Self {
            v: V1,
            post_id: post_id.into(),
        }
    }
}
impl DeliveryReady {
    /// One delivery (version 1).
    pub fn new(delivery_id: impl Into<DeliveryId>) -> Self {
        Self {
            v: V1,
            delivery_id: delivery_id.into(),
            more: Vec::new(),
        }
    }

    /// Several deliveries in one message (version 2 when there is more than one); `None`
    /// for an empty list. Callers keep a batch to [`MAX_DELIVERY_BATCH`].
    pub fn batch(ids: &[DeliveryId]) -> Option<Self> {
        let (&first, more) = ids.split_first()?;
        let mut message = Self::new(first);
        if !more.is_empty() {
            message.v = 2;
            message.more = more.to_vec();
        }
        Some(message)
    }

    /// `ids` as messages of up to [`MAX_DELIVERY_BATCH`] deliveries each, in order.
    pub fn batches(ids: &[DeliveryId]) -> impl Iterator<Item = Self> + '_ {
        ids.chunks(MAX_DELIVERY_BATCH).filter_map(Self::batch)
    }

    /// Every delivery the message names, in order.
    pub fn ids(&self) -> impl Iterator<Item = DeliveryId> + '_ {
        std::iter::once(self.delivery_id).chain(self.more.iter().copied())
    }

    /// How many deliveries the message names.
    pub fn count(&self) -> usize {
        1 + self.more.len()
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
    const MAX_VERSION: u16 = WIRE_VERSION;
    fn version(&self) -> u16 {
        self.v
    }
    /// A message naming more than [`MAX_DELIVERY_BATCH`] deliveries, or several in version
    /// one, was not written by jobwire: it is refused, and dead-lettered, instead of
    /// holding a sender's slots for an unbounded list.
    fn malformed(&self) -> Option<String> {
        if self.count() > MAX_DELIVERY_BATCH {
            Some(format!(
                "it names {} deliveries; at most {MAX_DELIVERY_BATCH} are written to one message",
                self.count()
            ))
        } else if self.v == V1 && !self.more.is_empty() {
            Some("version 1 names one delivery, this one several".to_owned())
        } else {
            None
        }
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

    #[test]
    fn a_batch_is_version_two_and_a_single_delivery_stays_version_one() {
        let ids = [DeliveryId(4), DeliveryId(5), DeliveryId(9)];
        let batch = DeliveryReady::batch(&ids).expect("not empty");
        let json = serde_json::to_string(&batch).expect("serializes");
        assert_eq!(json, r#"{"v":2,"delivery_id":4,"more":[5,9]}"#);
        let back: DeliveryReady = serde_json::from_str(&json).expect("parses");
        assert_eq!(back.ids().collect::<Vec<_>>(), ids);
        assert_eq!(back.count(), 3);

        let one = DeliveryReady::batch(&ids[..1]).expect("not empty");
        assert_eq!(
            serde_json::to_string(&one).expect("serializes"),
            r#"{"v":1,"delivery_id":4}"#
        );
        assert!(DeliveryReady::batch(&[]).is_none());
        // A version-1 message of an earlier release reads as a batch of one.
        let old: DeliveryReady =
            serde_json::from_str(r#"{"v":1,"delivery_id":7}"#).expect("parses");
        assert_eq!(old.ids().collect::<Vec<_>>(), [DeliveryId(7)]);
    }
}
