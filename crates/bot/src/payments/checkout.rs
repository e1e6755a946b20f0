//! Answering a pre-checkout query (Telegram waits at most 10 s): the room that sold the
//! invoice checks it, this sends the answer.

use teloxide::prelude::*;
use teloxide::types::PreCheckoutQuery;

use crate::BotError;
use crate::alerts::Alerts;
use crate::events::BotEvent;
use crate::telegram::{BotRuntime, describe};

/// Accepts the query, or refuses it with `refusal` (shown to the user).
pub(crate) async fn answer_pre_checkout(
    rt: &BotRuntime,
    q: &PreCheckoutQuery,
    refusal: Option<String>,
    alerts: &Alerts,
) -> Result<(), BotError> {
    let ok = refusal.is_none();
    let mut req = rt.bot.answer_pre_checkout_query(q.id.clone(), ok);
    if let Some(reason) = refusal {
        req = req.error_message(reason);
    }
    match req.await {
        Ok(_) => {
            BotEvent::PreCheckoutAnswered {
                bot: &rt.name,
                user: q.from.id.0,
                ok,
                currency: &q.currency,
                amount: q.total_amount,
            }
            .emit();
            Ok(())
        }
        Err(e) => {
            let error = describe(&e, &rt.token);
            tracing::error!(bot = %rt.name, user = q.from.id.0, error = %error, "answering a pre-checkout query failed");
            alerts.send(format!(
                "jobwire: a pre-checkout query of user {} could not be answered: {error}",
                q.from.id.0
            ));
            Err(BotError::Telegram {
                bot: rt.name.clone(),
                message: error,
            })
        }
    }
}
