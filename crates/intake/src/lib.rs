//! Where posts come from, and the intake stage that admits them into the pipeline.
//!
//! Sources implement [`Source`]: [`JsonlSource`] replays a labeled dataset, [`TdesktopExport`]
//! imports a Telegram Desktop JSON export. Both stream their files, so their size is not
//! bounded by memory. [`FeedSource`] polls RSS and Atom feeds (see [`feed`]).

pub mod channels;
pub mod feed;
pub mod jsonl;
pub mod retry;
pub mod source;
pub mod sources;
pub mod stage;
pub mod tdesktop;

pub use channels::{ChannelConfig, ChannelSection};
pub use feed::{
    FeedConfig, FeedError, FeedHandle, FeedItem, FeedJobFacts, FeedSource, FeedState, FeedStatus,
};
pub use jsonl::JsonlSource;
pub use source::{MAX_BATCH, Source, SourceError};
pub use tdesktop::{ImportOptions, ImportStats, TdesktopExport};
