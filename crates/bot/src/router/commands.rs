//! Messages: payments' service messages, commands, and answers to a pending question, each
//! handed to its room.

use teloxide::prelude::*;
use teloxide::types::MessageKind;

use super::Router;
use crate::BotError;
use crate::callbacks::Screen;
use crate::dialogue::DialogueState;
use crate::message::parse_command;
use crate::telegram::BotRuntime;
use crate::texts;
use crate::turn::Turn;

impl Router {
    pub(super) async fn on_message(&self, rt: &BotRuntime, m: &Message) -> Result<(), BotError> {
        if !m.chat.is_private() {
            return Ok(());
        }
        let turn = Turn::of_message(rt, m);
        // Payments come as service messages; only the main bot sells.
        if let Some(p) = m.successful_payment() {
            return self.successful_payment(&turn, m, p).await;
        }
        if let MessageKind::RefundedPayment(r) = &m.kind {
            return self
                .refunds
                .refunded_payment(&turn, m, &r.refunded_payment)
                .await;
        }
        let serves_categories = self.category_bots.serves(&rt.name);
        let (menus, bots) = (&self.menus, &self.category_bots);
        if let Some((cmd, args)) = m.text().and_then(|t| parse_command(t, &rt.username)) {
            tracing::debug!(bot = %rt.name, chat_id = turn.chat_id, command = %cmd, "command");
            if cmd == "cancel" {
                let was = if rt.is_main {
                    self.end_dialogue(&turn).await?
                } else {
                    None
                };
                turn.send(texts::cancelled(turn.lang, was.is_some()), None)
                    .await;
                return Ok(());
            }
            // Any other command ends a pending question.
            if rt.is_main {
                self.end_dialogue(&turn).await?;
            }
            let is_reply = m.reply_to_message().is_some();
            let turn = &turn;
            return match (cmd.as_str(), rt.is_main) {
                ("start", true) => menus.main_start(turn, args).await,
                ("start", false) => bots.start(turn, args).await,
                ("stop", _) if serves_categories => bots.stop(turn, args).await,
                ("stop" | "pause", true) => menus.set_paused(turn, true, None).await.map(drop),
                ("resume", true) => menus.set_paused(turn, false, None).await.map(drop),
                ("menu", true) => menus.screen(turn, Screen::Main, None).await,
                ("categories", true) => menus.screen(turn, Screen::Categories, None).await,
                ("filters", true) => menus.screen(turn, Screen::Filters, None).await,
                ("status" | "settings", true) => menus.screen(turn, Screen::Status, None).await,
                ("include", true) => menus.ask(turn, DialogueState::Include).await,
                ("exclude", true) => menus.ask(turn, DialogueState::Exclude).await,
                ("budget", true) => menus.ask(turn, DialogueState::MinBudget).await,
                ("quiet", true) => menus.ask(turn, DialogueState::QuietHours).await,
                ("wrong", _) => bots.report_wrong(turn, m, args).await,
                ("report", _) if is_reply || !rt.is_main => bots.report_wrong(turn, m, args).await,
                ("report", true) => menus.ask(turn, DialogueState::Report).await,
                ("help", true) => menus.screen(turn, Screen::Help, None).await,
                ("plans" | "subscription", true) => self.billing.plans(turn, None).await,
                ("buy", true) => self.billing.buy(turn, args, false).await,
                ("post", true) => self.placements.place_start(turn).await,
                ("paysupport", _) => {
                    self.billing.paysupport(turn).await;
                    Ok(())
                }
                ("terms", _) => {
                    self.billing.terms(turn).await;
                    Ok(())
                }
                (_, true) => {
                    turn.send(texts::unknown_input(turn.lang), None).await;
                    Ok(())
                }
                (_, false) => {
                    turn.send(bots.help(turn), None).await;
                    Ok(())
                }
            };
        }
        if rt.is_main {
            if let Some(state) = self.dialogues.get(&rt.name, turn.chat_id).await? {
                return self.input(&turn, state, m).await;
            }
            turn.send(texts::unknown_input(turn.lang), None).await;
        } else {
            turn.send(bots.help(&turn), None).await;
        }
        Ok(())
    }

    /// The answer to a pending question, to the room that asked it.
    async fn input(
        &self,
        turn: &Turn<'_>,
        state: DialogueState,
        m: &Message,
    ) -> Result<(), BotError> {
        if state.is_placement() {
            self.placements.place_input(turn, state, m).await
        } else {
            self.menus.input(turn, state, m).await
        }
    }

    /// Ends the chat's pending question; returns it.
    pub(super) async fn end_dialogue(
        &self,
        turn: &Turn<'_>,
    ) -> Result<Option<DialogueState>, BotError> {
        crate::dialogue::end(self.dialogues.as_ref(), &turn.rt.name, turn.chat_id).await
    }
}
