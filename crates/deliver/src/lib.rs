//! Delivery: sends each pending delivery row to its subscriber's chat through the bot of its
//! category, within Telegram's limits, exactly once in effect.
//!
//! A delivery row is claimed (`pending` → `sending`) in the database before the first Bot API
//! call and marked `sent` after Telegram accepted every part, so a crash leaves it either
//! untouched (sent later) or `sending` (re-sent on restart: the only window where a
//! subscriber can see a job twice is a crash between Telegram's answer and our commit).
//! Status writes from all concurrent sends are group-committed ([`recorder`]).
//!
//! **Architecture invariant:** nothing here decides *who* gets a job (that is fan-out) or
//! *what* the message says (rendered once per job at fan-out); this crate only moves
//! rendered parts to chats and records what happened.

pub mod broadcast;
pub mod config;
pub mod events;
pub mod limits;
pub mod recorder;
pub mod redis_limiter;
mod replies;
pub mod rows;
pub mod stage;
pub mod waits;

pub use config::{BotConfig, BotSection, CardKeyboard, RedisConfig, RedisSection, SendStageConfig};
pub use limits::{BotLimiter, Limiter, RateLimitConfig};
pub use redis_limiter::RedisLimiter;
pub use stage::SendStage;
pub use waits::WaitLog;
