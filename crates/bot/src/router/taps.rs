//! Button taps: the buttons under a card (every bot that delivers), and the main bot's
//! buttons, each handed to its room.

use teloxide::types::CallbackQuery;

use super::Router;
use crate::BotError;
use crate::callbacks::{Callback, PlaceStep, Screen};
use crate::telegram::{BotRuntime, answer};
use crate::turn::Turn;

impl Router {
    pub(super) async fn on_callback(
        &self,
        rt: &BotRuntime,
        q: &CallbackQuery,
    ) -> Result<(), BotError> {
        let turn = Turn::of_callback(rt, q);
        let turn = &turn;
        let chat_id = turn.chat_id;
        let message_id = q.message.as_ref().map(|m| m.id());
        // The buttons under a card work in every bot that delivers.
        if let Some((card, delivery_id)) = q
            .data
            .as_deref()
            .and_then(crate::card_buttons::CardAction::decode)
            .filter(|_| chat_id > 0)
        {
            let toast = self
                .cards
                .card_tap(turn, card, delivery_id, message_id)
                .await?;
            answer(rt, q, chat_id, Some(toast)).await;
            return Ok(());
        }
        let (menus, placements) = (&self.menus, &self.placements);
        let action = q.data.as_deref().and_then(Callback::decode);
        let toast: Option<String> = match action {
            _ if chat_id <= 0 || !rt.is_main => None,
            Some(Callback::CatchUp(missed)) => {
                Some(menus.catch_up(turn, missed, message_id).await?)
            }
            Some(Callback::Wants(wants)) => menus.set_wants(turn, wants, message_id).await?,
            Some(Callback::Place(step)) => match step {
                PlaceStep::New => {
                    self.end_dialogue(turn).await?;
                    placements.place_start(turn).await?;
                    None
                }
                PlaceStep::Category { slug, on } => {
                    placements.place_toggle(turn, slug, on, message_id).await?
                }
                PlaceStep::Done => placements.place_done(turn).await?,
                PlaceStep::Pay => {
                    placements.place_pay(turn).await?;
                    None
                }
                PlaceStep::Edit => {
                    placements.place_edit(turn).await?;
                    None
                }
                PlaceStep::Cancel => {
                    placements.place_cancel(turn).await?;
                    None
                }
            },
            Some(Callback::ShowAuthor(id)) => {
                let toast = self.cards.show_author(turn, id).await?;
                menus.screen(turn, Screen::Status, message_id).await?;
                Some(toast)
            }
            None => {
                tracing::debug!(bot = %rt.name, chat_id, "unknown callback data");
                None
            }
            Some(Callback::Screen(Screen::Plans)) => {
                self.end_dialogue(turn).await?;
                self.billing.plans(turn, message_id).await?;
                None
            }
            Some(Callback::Screen(screen)) => {
                self.end_dialogue(turn).await?;
                menus.screen(turn, screen, message_id).await?;
                None
            }
            Some(Callback::Buy { plan, card }) => {
                self.billing.buy(turn, &plan, card).await?;
                None
            }
            Some(Callback::CancelRenewal) => {
                self.billing.cancel_renewal(turn, q.from.id).await?;
                None
            }
            Some(Callback::Pause(paused)) => {
                Some(menus.set_paused(turn, paused, message_id).await?)
            }
            Some(Callback::Ask(state)) if state.is_placement() => {
                placements.place_ask(turn, state).await?;
                None
            }
            Some(Callback::Ask(state)) => {
                menus.ask(turn, state).await?;
                None
            }
            Some(Callback::Category { slug, on }) => {
                menus.toggle_category(turn, slug, on, message_id).await?
            }
        };
        answer(rt, q, chat_id, toast).await;
        Ok(())
    }
}
