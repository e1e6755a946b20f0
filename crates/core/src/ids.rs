//! Row ids as types: a post id can't be passed where a delivery id is expected. Each is the
//! database's `BIGINT` id, serialized as a bare number (the wire format of the queues and
//! of the admin API is unchanged), and printed as that number.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! row_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl $name {
            /// The number the database stores.
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                Self(id)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map(Self)
            }
        }
    };
}

row_id!(
    /// A channel, chat or feed (`channels.id`).
    ChannelId
);
row_id!(
    /// A post (`posts.id`).
    PostId
);
row_id!(
    /// A subscriber (`subscribers.id`), not their Telegram chat id.
    SubscriberId
);
row_id!(
    /// One job's delivery to one subscriber (`deliveries.id`).
    DeliveryId
);
row_id!(
    /// A subscriber's report of a missed or wrong vacancy (`reports.id`).
    ReportId
);
row_id!(
    /// A labeled example the classifier learns from (`examples.id`).
    ExampleId
);
row_id!(
    /// A queue message that failed for good (`dead_letters.id`).
    DeadLetterId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_travel_as_bare_numbers() {
        assert_eq!(serde_json::to_string(&PostId(42)).unwrap_or_default(), "42");
        let back: DeliveryId = serde_json::from_str("7").unwrap_or(DeliveryId(0));
        assert_eq!(back, DeliveryId(7));
        assert_eq!(PostId(42).to_string(), "42");
        assert_eq!("5".parse::<ChannelId>(), Ok(ChannelId(5)));
        assert_eq!(i64::from(SubscriberId(3)), 3);
    }
}
row_id!(
    /// A period of access a trial or a payment bought (`access_periods.id`).
    AccessPeriodId
);
row_id!(
    /// One row of the payment ledger (`payments.id`).
    LedgerId
);
row_id!(
    /// An admin account of the web panel (`admins.id`).
    AdminId
);
row_id!(
    /// An admin's broadcast to many subscribers (`broadcasts.id`).
    BroadcastId
);
row_id!(
    /// An employer's direct placement (`placements.id`).
    PlacementId
);
row_id!(
    /// One version of the classification prompt (`prompt_versions.id`).
    PromptVersionId
);
