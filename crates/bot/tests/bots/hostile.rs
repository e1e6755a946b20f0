//! Hostile input: replies that quote a huge input are still delivered, and one chat cannot
//! file reports without end.

use jobwire_bot::{DEFAULT_REPORTS_PER_HOUR, UpdateMode};
use jobwire_testkit::telegram::RecordedMessage;

use crate::common::*;

const EVE: i64 = 666;

/// Sends `body` to the main bot as `from` and waits for its `n`th message into the chat.
async fn say(env: &Env, from: i64, body: &str, n: usize) -> RecordedMessage {
    env.inject(MAIN_ID, text(from, body));
    env.wait_sent(MAIN_ID, from, n).await.remove(n - 1)
}

#[tokio::test]
async fn refusals_quoting_a_huge_input_are_delivered_and_quote_it_short() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    // Three refusals that quote the input: a too long keyword, an unknown time zone, an
    // unknown currency; each answer is 4,090 characters (Telegram's limit is 4,096).
    let keyword = "ж".repeat(4090);
    let zone = format!("1-2 {}", "Z".repeat(4086));
    let currency = format!("100 {}", "ы".repeat(4086));
    let cases = [
        ("/include", keyword.as_str()),
        ("/quiet", zone.as_str()),
        ("/budget", currency.as_str()),
    ];
    let mut n = 0;
    for (cmd, answer) in cases {
        assert!(answer.chars().count() >= 4090);
        say(&env, EVE, cmd, n + 1).await;
        // Without the cut, Telegram refuses the reply ("message is too long") and the user
        // sees nothing: waiting for it would time out.
        let reply = say(&env, EVE, answer, n + 2).await.visible_text;
        n += 2;
        assert!(reply.chars().count() <= 4096, "{} chars", reply.len());
        assert!(reply.starts_with('❌'), "{reply}");
        // The quote is «…» in Russian: at most 60 characters of the input, then "…".
        let quoted = reply
            .split_once('«')
            .and_then(|(_, rest)| rest.split_once('»'))
            .map(|(q, _)| q)
            .expect("the refusal quotes the input");
        let kept = quoted
            .strip_suffix('…')
            .expect("the quote is marked as cut");
        assert!(
            !kept.is_empty() && kept.chars().count() <= 60,
            "{cmd}: {quoted}"
        );
        assert!(answer.contains(kept), "{cmd}: {quoted}");
    }
    bots.stop().await;
}

#[tokio::test]
async fn a_chat_cannot_file_reports_without_end() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    env.inject(WEB_ID, text(EVE, "/start"));
    let welcome = env.wait_sent(WEB_ID, EVE, 1).await.remove(0);
    let card = RecordedMessage {
        visible_text: "Продам гараж, недорого.".into(),
        ..welcome
    };
    let limit = DEFAULT_REPORTS_PER_HOUR as usize;
    for i in 0..limit {
        env.inject(
            WEB_ID,
            reply(EVE, &format!("/wrong спам {i}"), WEB_ID, &card),
        );
        let sent = env.wait_sent(WEB_ID, EVE, i + 2).await;
        assert!(sent[i + 1].visible_text.contains("Спасибо"), "{sent:?}");
    }
    assert_eq!(env.store.reports(None, 100).await.unwrap().len(), limit);

    // One more is refused, in the user's language, and nothing is stored…
    env.inject(WEB_ID, reply(EVE, "/wrong ещё", WEB_ID, &card));
    let refusal = env.wait_sent(WEB_ID, EVE, limit + 2).await[limit + 1]
        .visible_text
        .clone();
    assert!(
        refusal.contains(&format!("не больше {limit} в час")),
        "{refusal}"
    );
    // …nor through another bot: a missed vacancy to the main bot.
    say(&env, EVE, "/report", 1).await;
    let refusal = say(&env, EVE, "Ищем дизайнера логотипа, 5000 руб", 2)
        .await
        .visible_text;
    assert!(refusal.contains("Слишком много"), "{refusal}");
    // The question is over: more text is not another report.
    let after = say(&env, EVE, "и ещё одна вакансия", 3).await.visible_text;
    assert!(after.contains("/start"), "{after}");
    assert_eq!(env.store.reports(None, 100).await.unwrap().len(), limit);

    // An English speaker is told in English; another chat has its own allowance.
    let other = EVE + 1;
    env.inject(MAIN_ID, text_in(other, "/report", "en"));
    env.wait_sent(MAIN_ID, other, 1).await;
    env.inject(MAIN_ID, text_in(other, "We need a logo designer", "en"));
    let thanks = env.wait_sent(MAIN_ID, other, 2).await[1]
        .visible_text
        .clone();
    assert!(thanks.contains("Thank you"), "{thanks}");
    assert_eq!(env.store.reports(None, 100).await.unwrap().len(), limit + 1);
    bots.stop().await;
}
