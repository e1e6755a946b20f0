//! Row types: what the stages read from and write to the store.

use chrono::{DateTime, Utc};
use jobwire_core::subscriber::MinBudget;
use jobwire_core::{CategorySlug, PostKind};

pub use jobwire_core::ids::{
    AdminId, BroadcastId, ChannelId, DeadLetterId, DeliveryId, ExampleId, PlacementId, PostId,
    PromptVersionId, ReportId, SubscriberId,
};

pub use jobwire_core::source::{
    FeedSettings, FieldError, SourceEdit, SourceErrors, SourceInput, SourceKind, SourceSpec,
};

/// A channel: a source posts come from (a Telegram channel or chat, a feed, or one only
/// imports and placements name), with its keyword rules. The database is the truth about
/// sources; the configuration file only seeds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRow {
    pub id: ChannelId,
    pub handle: String,
    pub title: Option<String>,
    pub kind: SourceKind,
    pub enabled: bool,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// How the feed is polled (feeds only).
    pub feed: Option<FeedSettings>,
    /// Set when an admin removed the source: it is not read any more and not listed, but
    /// its posts keep pointing at it.
    pub removed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ChannelRow {
    /// Whether a reader should read it now: a Telegram source or feed that is enabled and
    /// not removed.
    pub fn is_read(&self) -> bool {
        self.enabled && self.removed_at.is_none() && self.kind != SourceKind::External
    }
}

/// What the reader of a source reports about it ([`crate::ChannelStore::note_source`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceNote {
    /// A Telegram account joined the channel (or found itself joined).
    Joined,
    /// Reading it failed: a join refused, a feed answering with an error.
    Error(String),
    /// Reading it worked again: the last error is cleared.
    Ok,
}

/// What the admin panel shows about a source, computed from its posts since a moment.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceStats {
    pub channel_id: ChannelId,
    /// When a Telegram account joined it (`None`: not joined yet, or not Telegram).
    pub joined_at: Option<DateTime<Utc>>,
    /// The newest post's time (as the source dated it), over all time.
    pub last_post_at: Option<DateTime<Utc>>,
    /// Posts read since the moment asked about (every post, filtered ones included).
    pub posts: u64,
    /// `posts` per day over the period asked about.
    pub posts_per_day: f64,
    /// Of those, the ones classified as vacancies (kind `job`).
    pub jobs: u64,
    /// `jobs / posts`; `None` when nothing was read.
    pub job_share: Option<f64>,
    /// The last error reading it, and when; `None` once reading works again.
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
}

/// Where a post is in the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PostStatus {
    /// Dropped by the channel's keyword rules (kept for the admin to see why).
    Filtered,
    /// Waiting for the classifier.
    Queued,
    /// The classifier was unavailable; retried at `next_attempt_at`.
    Waiting,
    NotJob,
    /// Classified as a job (or a résumé with categories), waiting for fan-out.
    Job,
    /// Deliveries were written.
    FannedOut,
    /// The same vacancy as an earlier post (`duplicate_of`): not classified or delivered again.
    Duplicate,
}

impl PostStatus {
    pub const ALL: [Self; 7] = [
        Self::Filtered,
        Self::Queued,
        Self::Waiting,
        Self::NotJob,
        Self::Job,
        Self::FannedOut,
        Self::Duplicate,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Filtered => "filtered",
            Self::Queued => "queued",
            Self::Waiting => "waiting",
            Self::NotJob => "not_job",
            Self::Job => "job",
            Self::FannedOut => "fanned_out",
            Self::Duplicate => "duplicate",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPost {
    pub channel_id: ChannelId,
    pub external_id: String,
    pub text: String,
    pub author: Option<String>,
    pub url: Option<String>,
    pub posted_at: DateTime<Utc>,
    pub received_at: DateTime<Utc>,
    pub status: PostStatus,
    pub filter_reason: Option<String>,
    /// Content fingerprint for near-duplicate detection (hex), when computed.
    pub fingerprint: Option<String>,
    /// For a `Duplicate`: the earlier post it repeats.
    pub duplicate_of: Option<PostId>,
}

/// A recent post's fingerprint, to rebuild the duplicate index at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentFingerprint {
    pub id: PostId,
    pub posted_at: DateTime<Utc>,
    pub fingerprint: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    Inserted(PostId),
    /// `(channel, external id)` was stored before: the id of that row.
    AlreadyKnown(PostId),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PostRow {
    pub id: PostId,
    pub channel_id: ChannelId,
    pub channel_handle: String,
    pub channel_title: Option<String>,
    pub external_id: String,
    pub text: String,
    pub author: Option<String>,
    pub url: Option<String>,
    pub posted_at: DateTime<Utc>,
    pub received_at: DateTime<Utc>,
    pub status: PostStatus,
    pub attempts: u32,
}

/// A classifier's verdict as stored, with its cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassificationRecord {
    pub is_job: bool,
    pub kind: PostKind,
    pub categories: Vec<CategorySlug>,
    pub confidence: f32,
    pub model: String,
    pub prompt_version: Option<String>,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub latency_ms: u32,
    /// What the post says about the job (title, budget, …), for jobs.
    pub extraction: Option<jobwire_core::extract::Extraction>,
    /// What the classification cost, in US dollars (0 for the local model).
    pub cost_usd: f64,
}

/// A subscriber as configured (by the main bot later, by a file or a test now).
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriberSpec {
    pub chat_id: i64,
    pub name: Option<String>,
    pub categories: Vec<CategorySlug>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub paused: bool,
    pub quiet_hours: Option<QuietHoursSpec>,
    /// The personal minimum budget.
    pub min_budget: Option<MinBudget>,
}

/// Quiet hours as entered: `"23:00"`, `"08:00"` and an IANA zone name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuietHoursSpec {
    pub start: String,
    pub end: String,
    pub time_zone: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubscriberRow {
    pub id: SubscriberId,
    pub chat_id: i64,
    pub name: Option<String>,
    pub categories: Vec<CategorySlug>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub paused: bool,
    pub blocked: bool,
    pub quiet_hours: Option<QuietHoursSpec>,
    /// The personal minimum budget.
    pub min_budget: Option<MinBudget>,
}

impl SubscriberRow {
    /// The spec that recreates this subscriber (for read-modify-write by the bots).
    pub fn to_spec(&self) -> SubscriberSpec {
        SubscriberSpec {
            chat_id: self.chat_id,
            name: self.name.clone(),
            categories: self.categories.clone(),
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            paused: self.paused,
            quiet_hours: self.quiet_hours.clone(),
            min_budget: self.min_budget.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub subscriber_id: SubscriberId,
    pub chat_id: i64,
    /// The configured bot that sends it.
    pub bot: String,
    /// Held until then (quiet hours); `None` = send now.
    pub not_before: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    Pending,
    /// Waiting for `not_before` (quiet hours, or a retry after an error).
    Held,
    /// A Telegram call is in flight.
    Sending,
    Sent,
    /// The subscriber blocked the bot (403).
    Blocked,
    /// Telegram refused the message for good (400), or retries ran out.
    Failed,
    /// Not sent: enough subscribers reported the post; it waits for an admin, who either
    /// confirms the reports (it stays unsent) or dismisses them (it is sent).
    Withheld,
}

impl DeliveryStatus {
    pub const ALL: [Self; 7] = [
        Self::Pending,
        Self::Held,
        Self::Sending,
        Self::Sent,
        Self::Blocked,
        Self::Failed,
        Self::Withheld,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Held => "held",
            Self::Sending => "sending",
            Self::Sent => "sent",
            Self::Blocked => "blocked",
            Self::Failed => "failed",
            Self::Withheld => "withheld",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    pub fn is_final(self) -> bool {
        matches!(self, Self::Sent | Self::Blocked | Self::Failed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    pub id: DeliveryId,
    pub post_id: PostId,
    pub subscriber_id: SubscriberId,
    pub chat_id: i64,
    pub bot: String,
    pub status: DeliveryStatus,
    pub not_before: Option<DateTime<Utc>>,
    /// How many parts of the job's message were sent already (long jobs are split).
    pub parts_sent: u32,
    pub message_ids: Vec<i64>,
    pub attempts: u32,
    pub error: Option<String>,
    /// The language the chat's user reads (`ru`, `en`), when a bot noted it.
    pub lang: Option<String>,
}

/// One status change of a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryUpdate {
    /// `pending` → `sending`, just before the first Telegram call. Applies only to a
    /// pending delivery, so two senders never both claim one.
    Claim {
        id: DeliveryId,
    },
    /// One more part was accepted by Telegram.
    PartSent {
        id: DeliveryId,
        message_id: i64,
    },
    /// Every part was accepted.
    Sent {
        id: DeliveryId,
    },
    /// The last part was accepted: [`DeliveryUpdate::PartSent`] and
    /// [`DeliveryUpdate::Sent`] in one write.
    LastPartSent {
        id: DeliveryId,
        message_id: i64,
    },
    /// Try again at `at` (429, network error); counts an attempt.
    Retry {
        id: DeliveryId,
        at: DateTime<Utc>,
        error: String,
        /// The failed call may have reached Telegram (a network error after the request
        /// went out): the next attempt may send the message twice. Counted with the
        /// deliveries re-sent after a crash (`resent_after_crash`).
        unknown_outcome: bool,
    },
    /// 403: this bot cannot reach the subscriber (see [`BlockScope`]). The delivery and the
    /// subscriber's other unsent deliveries through the same bot (every bot for
    /// [`BlockScope::Everywhere`]) are blocked.
    Blocked {
        id: DeliveryId,
        error: String,
        scope: BlockScope,
    },
    Failed {
        id: DeliveryId,
        error: String,
    },
}

impl DeliveryUpdate {
    pub fn id(&self) -> DeliveryId {
        match self {
            Self::Claim { id }
            | Self::PartSent { id, .. }
            | Self::LastPartSent { id, .. }
            | Self::Sent { id }
            | Self::Retry { id, .. }
            | Self::Blocked { id, .. }
            | Self::Failed { id, .. } => *id,
        }
    }
}

/// How many rows are in each status: the demo's summary and the admin's overview.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PipelineCounts {
    pub posts: u64,
    pub filtered: u64,
    pub queued: u64,
    pub waiting: u64,
    pub not_job: u64,
    /// Near-duplicates of earlier posts.
    pub duplicates: u64,
    /// Posts classified as jobs (whether fanned out yet or not).
    pub jobs: u64,
    /// Résumés routed to the subscribers who asked for them (fanned out or waiting to be).
    pub resumes: u64,
    /// Jobs whose deliveries are not written yet.
    pub awaiting_fanout: u64,
    pub deliveries_pending: u64,
    pub deliveries_held: u64,
    pub deliveries_sending: u64,
    pub deliveries_sent: u64,
    pub deliveries_blocked: u64,
    pub deliveries_failed: u64,
    /// Not sent because enough subscribers reported the post (waiting for an admin).
    pub deliveries_withheld: u64,
    pub deliveries_resent_after_crash: u64,
}

impl PipelineCounts {
    /// Nothing is waiting for a stage: every post and delivery is in a final state
    /// (held deliveries wait for quiet hours to end and count as settled).
    pub fn is_settled(&self) -> bool {
        self.queued == 0
            && self.waiting == 0
            && self.deliveries_pending == 0
            && self.deliveries_sending == 0
            && self.awaiting_fanout == 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentDelivery {
    pub post_id: PostId,
    pub subscriber_id: SubscriberId,
    pub chat_id: i64,
    pub bot: String,
    pub message_ids: Vec<i64>,
}

/// Where a labeled example came from. Human labels outweigh the LLM's in training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExampleSource {
    /// The LLM's answer on a post the local model was unsure of.
    Llm,
    /// A subscriber's report, accepted by an admin.
    Report,
    /// An admin's re-label of a post.
    Relabel,
}

impl ExampleSource {
    pub const ALL: [ExampleSource; 3] = [Self::Llm, Self::Report, Self::Relabel];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Llm => "llm",
            Self::Report => "report",
            Self::Relabel => "relabel",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// Whether a person decided this label.
    pub fn is_human(self) -> bool {
        !matches!(self, Self::Llm)
    }
}

/// A labeled example to learn from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewExample {
    /// The post it labels, when it came from one (an example per post and source: a
    /// second label of the same post by the same source replaces the first).
    pub post_id: Option<PostId>,
    pub text: String,
    pub is_job: bool,
    /// `job`, `resume`, `ad` or `chatter`.
    pub kind: PostKind,
    pub categories: Vec<CategorySlug>,
    pub source: ExampleSource,
}

/// A stored labeled example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleRow {
    pub id: ExampleId,
    pub post_id: Option<PostId>,
    pub text: String,
    pub is_job: bool,
    pub kind: PostKind,
    pub categories: Vec<CategorySlug>,
    pub source: ExampleSource,
    pub created_at: DateTime<Utc>,
}

/// What a subscriber reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportKind {
    /// A vacancy jobwire should have delivered and did not (forwarded or pasted).
    Missed,
    /// A delivered message that is not a job, or not of this category (`/wrong`).
    Wrong,
    /// The card's "Not a vacancy" button: once per user and post.
    NotJob,
    /// The card's "Wrong category" button: once per user and post.
    WrongCategory,
}

impl ReportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Missed => "missed",
            Self::Wrong => "wrong",
            Self::NotJob => "not_job",
            Self::WrongCategory => "wrong_category",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Missed, Self::Wrong, Self::NotJob, Self::WrongCategory]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// Where a report stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportStatus {
    Pending,
    Accepted,
    Rejected,
}

impl ReportStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Accepted => "accepted",
            Self::Rejected => "rejected",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Pending, Self::Accepted, Self::Rejected]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// A report as a subscriber files it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReport {
    pub chat_id: i64,
    /// The post it is about, when jobwire knows it (a delivered message, a known link).
    pub post_id: Option<PostId>,
    pub kind: ReportKind,
    /// The vacancy's text (forwarded or pasted) or the subscriber's comment.
    pub text: String,
    /// A link to the original, when given.
    pub link: Option<String>,
}

/// A stored report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    pub id: ReportId,
    pub chat_id: i64,
    pub post_id: Option<PostId>,
    pub kind: ReportKind,
    pub text: String,
    pub link: Option<String>,
    pub status: ReportStatus,
    pub created_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
    /// The labeled example an accepted report became.
    pub example_id: Option<ExampleId>,
}

/// Classification totals of one model and prompt version over a period.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassificationTotals {
    pub model: String,
    pub prompt_version: Option<String>,
    pub posts: u64,
    pub jobs: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    pub latency_ms: u64,
}

/// Why a bot cannot reach a subscriber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockScope {
    /// The user blocked this bot (or removed it from the chat).
    Bot,
    /// The user never pressed Start in this bot: it may not write first.
    NotStarted,
    /// Nobody can reach the user (the account was deleted): every bot.
    Everywhere,
}

impl BlockScope {
    /// The `bot_blocks.state` of a per-bot scope (`None` for [`Self::Everywhere`]).
    pub fn state(self) -> Option<&'static str> {
        match self {
            Self::Bot => Some("blocked"),
            Self::NotStarted => Some("not_started"),
            Self::Everywhere => None,
        }
    }

    pub fn parse_state(s: &str) -> Option<Self> {
        match s {
            "blocked" => Some(Self::Bot),
            "not_started" => Some(Self::NotStarted),
            _ => None,
        }
    }
}

/// A bot that cannot reach a subscriber (`bot_blocks`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotBlock {
    pub subscriber_id: SubscriberId,
    pub chat_id: i64,
    pub bot: String,
    pub scope: BlockScope,
}
