//! jobwire's domain: the types a post, a job and a subscriber are made of, and the pure logic
//! that decides what happens to them.
//!
//! **Architecture invariant:** this crate does no IO and cannot fail on the outside world. It
//! has no async code, no clock reads (time is always passed in; [`clock::SystemClock`] is
//! the one place the edges read it through) and no database or network
//! types. Everything here is deterministic and testable with plain values; the edges
//! (`intake`, `classify`, `deliver`, `store`) do the talking.

pub mod amount;
pub mod billing;
pub mod card;
pub mod category;
pub mod category_section;
pub mod channel_ref;
pub mod clock;
pub mod config;
pub mod dataset;
pub mod dedup;
pub mod extract;
pub mod format;
pub mod ids;
pub mod live;
pub mod matching;
pub mod metric;
pub mod normalize;
pub mod placement;
pub mod post;
pub mod quiet;
pub mod rules;
pub mod secret;
pub mod seeded;
pub mod source;
pub mod subscriber;
pub mod tghtml;

pub use category::{CategorySlug, InvalidCategory};
pub use ids::{
    AccessPeriodId, AdminId, BroadcastId, ChannelId, DeliveryId, ExampleId, LedgerId, PlacementId,
    PostId, PromptVersionId, ReportId, SubscriberId,
};
pub use post::{IncomingPost, PostKind, Verdict};
