//! What the main bot's menus show of a subscriber's paid access, asked without knowing how
//! it is sold: the billing room answers ([`crate::billing`]), the runtime wires it.

use async_trait::async_trait;

use crate::BotError;
use crate::texts::Lang;
use crate::turn::Turn;

/// A subscriber's paid access, as the menus show it.
#[async_trait]
pub(crate) trait Access: Send + Sync + std::fmt::Debug {
    /// Whether plans are sold at all (billing on).
    fn selling(&self) -> bool;
    /// The subscription's state in a line, for the settings; `None` when nothing is sold.
    async fn line(&self, chat_id: i64, lang: Lang) -> Result<Option<String>, BotError>;
    /// Whether the user has a Stars subscription that will renew itself.
    async fn renewing(&self, chat_id: i64) -> Result<bool, BotError>;
    /// A new user's trial, once per Telegram user; tells the user when one started.
    async fn start_trial(&self, turn: &Turn<'_>) -> Result<(), BotError>;
}
