//! The Prompt page over HTTP (the router driven in-process, a SQLite store on a temp file,
//! a fake LLM lab answering canned JSON): the versions and the built-in one, writing a
//! version (checked first), trying a prompt on a post or a pasted text, making a version
//! current (recorded and audited).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use axum::http::{StatusCode, header};
use chrono::Utc;
use common::Bed;
use jobwire_admin::PromptLab;
use jobwire_classify::llm::PROMPT_TEMPLATE;
use jobwire_store::PostId;

/// A prompt template that passes the checks.
const GOOD: &str = "Sort the posts.\n{{categories}}\n{{reason}}Answer in JSON.";

/// What the fake LLM answers unless a test says otherwise.
const CANNED: &str = r#"{"items":[{"id":"p1","kind":"job","categories":["web","bogus"],"confidence":0.93,"extraction":null}]}"#;

/// Answers canned JSON and remembers what it was asked.
#[derive(Debug)]
struct FakeLab {
    answer: Mutex<Result<String, String>>,
    asked: Mutex<Vec<(String, String)>>,
}

impl FakeLab {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            answer: Mutex::new(Ok(CANNED.to_owned())),
            asked: Mutex::new(Vec::new()),
        })
    }

    fn answer(&self, answer: Result<&str, &str>) {
        *self.answer.lock().unwrap() = answer.map(str::to_owned).map_err(str::to_owned);
    }

    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl PromptLab for FakeLab {
    async fn try_prompt(&self, template: &str, text: &str) -> Result<String, String> {
        self.asked
            .lock()
            .unwrap()
            .push((template.to_owned(), text.to_owned()));
        self.answer.lock().unwrap().clone()
    }
}

async fn bed(lab: Option<Arc<FakeLab>>) -> Bed {
    common::open(None, |settings| match lab {
        Some(lab) => settings.prompt_lab(lab),
        None => settings,
    })
    .await
}

impl Bed {
    async fn post_in(&self, channel: &str, text: &str) -> PostId {
        let ch = self
            .store
            .ensure_channel(channel, Utc::now())
            .await
            .unwrap();
        common::queued_post(self.store.as_ref(), ch.id, "1".to_owned(), text, None).await
    }

    async fn audit_actions(&self) -> Vec<(String, String, String)> {
        self.store
            .audit_log(50, None)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.actor, e.action, e.target))
            .collect()
    }
}

/// The text of an element with `id`, up to its closing tag (for asserting on one cell).
fn element<'a>(body: &'a str, id: &str) -> &'a str {
    let start = body
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {body}"));
    let rest = &body[start..];
    let end = rest.find("</tr>").map_or(rest.len(), |e| e + 5);
    &rest[..end]
}

/// How askama writes a text into HTML.
fn escaped(text: &str) -> String {
    text.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

#[tokio::test]
async fn the_page_lists_the_built_in_prompt_as_current_and_starts_a_new_version_from_it() {
    let bed = bed(None).await;
    let s = bed.login().await;
    let page = bed.get("/prompt", Some(&s)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("href=\"/prompt\" aria-current=\"page\""),
        "nav"
    );
    let built_in = element(&page.body, "version-built-in");
    assert!(built_in.contains("classify.v5"), "{built_in}");
    assert!(built_in.contains(">current<"), "{built_in}");
    assert!(
        page.body.contains("name=\"name\" value=\"classify.v6\""),
        "a name is suggested"
    );
    let first_line = PROMPT_TEMPLATE.lines().next().unwrap();
    assert!(
        page.body.contains(&escaped(first_line)),
        "the form starts from the current text"
    );
    // No LLM configured: the page says so, and offers no Try button.
    assert!(
        page.body.contains("Trying is not available"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("id=\"try-prompt\""));

    let ru = bed.get("/prompt?lang=ru", Some(&s)).await;
    assert!(ru.body.contains("Версии") && ru.body.contains("Проверка недоступна"));
}

#[tokio::test]
async fn a_version_is_checked_before_it_is_saved() {
    let bed = bed(None).await;
    let s = bed.login().await;

    let no_reason = "Sort the posts.\n{{categories}}\n";
    let bad = bed
        .post(
            "/prompt",
            &s,
            &[("name", "classify.v6"), ("text", no_reason)],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.body
            .contains("the prompt lacks the placeholder {{reason}}"),
        "{}",
        bad.body
    );
    assert!(
        bad.body.contains("Sort the posts.\n{{categories}}"),
        "what was typed is kept"
    );
    let typo = bed
        .post(
            "/prompt",
            &s,
            &[
                ("name", "classify.v6"),
                ("text", "{{categories}} {{reason}} {{categorys}}"),
            ],
        )
        .await;
    assert_eq!(typo.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        typo.body.contains("{{categorys}}, which nothing fills in"),
        "{}",
        typo.body
    );
    let bad_name = bed
        .post("/prompt", &s, &[("name", "v 5 <b>"), ("text", GOOD)])
        .await;
    assert_eq!(bad_name.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad_name.body.contains("only letters, digits"),
        "{}",
        bad_name.body
    );
    assert!(
        !bad_name.body.contains("v 5 <b>"),
        "the name is shown as text"
    );
    let built_in_name = bed
        .post("/prompt", &s, &[("name", "classify.v5"), ("text", GOOD)])
        .await;
    assert_eq!(built_in_name.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(built_in_name.body.contains("the built-in version"));
    assert!(bed.store.prompt_versions().await.unwrap().is_empty());

    let saved = bed
        .post(
            "/prompt",
            &s,
            &[
                ("name", "classify.v6"),
                ("text", "Sort.\r\n{{categories}}\r\n{{reason}}"),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let versions = bed.store.prompt_versions().await.unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(
        (
            versions[0].name.as_str(),
            versions[0].text.as_str(),
            versions[0].created_by.as_str()
        ),
        ("classify.v6", "Sort.\n{{categories}}\n{{reason}}", "ops")
    );
    // Written is not current.
    assert_eq!(bed.store.current_prompt_version().await.unwrap(), None);
    let to = saved.headers[header::LOCATION].to_str().unwrap().to_owned();
    let page = bed.get(&to, Some(&s)).await;
    assert!(
        page.body.contains("Saved as a new version"),
        "{}",
        page.body
    );
    assert!(element(&page.body, "version-built-in").contains(">current<"));
    assert!(
        page.body.contains("name=\"name\" value=\"classify.v7\""),
        "the next name is suggested"
    );

    let twice = bed
        .post("/prompt", &s, &[("name", "classify.v6"), ("text", GOOD)])
        .await;
    assert_eq!(twice.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        twice
            .body
            .contains("a version named classify.v6 exists already"),
        "{}",
        twice.body
    );
    assert_eq!(bed.store.prompt_versions().await.unwrap().len(), 1);
    let created: Vec<_> = bed
        .audit_actions()
        .await
        .into_iter()
        .filter(|(_, action, _)| action == "prompt.create")
        .collect();
    assert_eq!(
        created,
        [(
            "ops".to_owned(),
            "prompt.create".to_owned(),
            format!("prompt {} classify.v6", versions[0].id)
        )]
    );
}

#[tokio::test]
async fn making_a_version_current_records_who_and_when() {
    let bed = bed(None).await;
    let s = bed.login().await;
    for (name, text) in [("classify.v6", GOOD), ("classify.v7", GOOD)] {
        let a = bed
            .post("/prompt", &s, &[("name", name), ("text", text)])
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    }
    let v5 = bed.store.prompt_versions().await.unwrap()[1].clone();
    assert_eq!(v5.name, "classify.v6");
    let before = Utc::now();
    let made = bed
        .post(&format!("/prompt/{}/activate", v5.id), &s, &[])
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let current = bed.store.current_prompt_version().await.unwrap().unwrap();
    assert_eq!(current.name, "classify.v6");
    assert_eq!(current.activated_by.as_deref(), Some("ops"));
    let at = current.activated_at.unwrap();
    assert!(at >= before - chrono::Duration::seconds(1) && at <= Utc::now());

    let page = bed
        .get(made.headers[header::LOCATION].to_str().unwrap(), Some(&s))
        .await;
    assert!(page.body.contains("uses this version within seconds"));
    let line = element(&page.body, &format!("version-{}", v5.id));
    assert!(line.contains(">current<"), "{line}");
    assert_eq!(
        line.matches("ops · ").count(),
        2,
        "who wrote it and who made it current: {line}"
    );
    assert!(!line.contains("Make current"), "{line}");
    assert!(!element(&page.body, "version-built-in").contains(">current<"));
    assert!(
        page.body.contains(&escaped("Sort the posts.")),
        "the form starts from the current version"
    );

    assert!(bed.audit_actions().await.contains(&(
        "ops".to_owned(),
        "prompt.activate".to_owned(),
        format!("prompt {} classify.v6", v5.id)
    )));
    let missing = bed.post("/prompt/999/activate", &s, &[]).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(
        bed.store
            .current_prompt_version()
            .await
            .unwrap()
            .unwrap()
            .name,
        "classify.v6"
    );
}

#[tokio::test]
async fn a_prompt_is_tried_on_a_post_or_a_pasted_text() {
    let lab = FakeLab::new();
    let bed = bed(Some(lab.clone())).await;
    let s = bed.login().await;
    let page = bed.get("/prompt", Some(&s)).await;
    assert!(page.body.contains("id=\"try-prompt\""));
    assert!(!page.body.contains("Trying is not available"));

    // The text being edited, on a stored post.
    let post = bed
        .post_in("@jobs", "Нужен лендинг на Tilda, бюджет 30к")
        .await;
    let tried = bed
        .post(
            "/prompt/try",
            &s,
            &[
                ("name", "classify.v6"),
                ("text", GOOD),
                ("post_id", &post.get().to_string()),
                ("with", "edited"),
            ],
        )
        .await;
    assert_eq!(tried.status, StatusCode::OK, "{}", tried.body);
    assert_eq!(
        lab.asked(),
        [(
            GOOD.to_owned(),
            "Нужен лендинг на Tilda, бюджет 30к".to_owned()
        )]
    );
    let verdict = &tried.body[tried.body.find("id=\"verdict\"").unwrap()..];
    assert!(verdict.contains("<td>job</td>"), "{verdict}");
    assert!(
        verdict.contains("<td>web</td>"),
        "unknown categories are dropped: {verdict}"
    );
    assert!(verdict.contains("<td>0.93</td>"), "{verdict}");
    assert!(
        tried.body.contains(&escaped("\"confidence\": 0.93")),
        "the raw answer is shown: {}",
        tried.body
    );
    assert!(
        tried.body.contains("value=\"classify.v6\"") && tried.body.contains("Answer in JSON."),
        "the form keeps what was being edited"
    );

    // A stored version, on a pasted text.
    let saved = bed
        .post("/prompt", &s, &[("name", "classify.v6"), ("text", GOOD)])
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let v5 = bed.store.prompt_versions().await.unwrap()[0].clone();
    lab.answer(Ok(r#"{"items":[{"id":"p1","kind":"chatter","categories":[],"confidence":0.2,"extraction":null,"note":"<script>x</script>"}]}"#));
    let pasted = bed
        .post(
            "/prompt/try",
            &s,
            &[
                ("text", "whatever is in the box"),
                ("sample", "Всем привет <script>x</script>"),
                ("with", &v5.id.to_string()),
            ],
        )
        .await;
    assert_eq!(pasted.status, StatusCode::OK, "{}", pasted.body);
    assert_eq!(
        lab.asked().last().unwrap(),
        &(GOOD.to_owned(), "Всем привет <script>x</script>".to_owned())
    );
    assert!(pasted.body.contains("<td>chatter</td>"), "{}", pasted.body);
    assert!(
        !pasted.body.contains("<script>x"),
        "the answer is shown as text"
    );
    assert!(
        pasted.body.contains("(classify.v6)"),
        "which prompt was tried"
    );

    // The built-in one.
    lab.answer(Ok("Sorry, I cannot help with that."));
    let unreadable = bed
        .post(
            "/prompt/try",
            &s,
            &[("sample", "a text"), ("with", "built-in")],
        )
        .await;
    assert_eq!(unreadable.status, StatusCode::OK);
    assert_eq!(lab.asked().last().unwrap().0, PROMPT_TEMPLATE);
    assert!(
        unreadable
            .body
            .contains("The answer cannot be read: answer is not JSON"),
        "{}",
        unreadable.body
    );
    assert!(unreadable.body.contains("Sorry, I cannot help with that."));

    // The LLM failing is said on the page.
    lab.answer(Err("classifier unavailable after 1 attempt(s): 503"));
    let down = bed
        .post(
            "/prompt/try",
            &s,
            &[("sample", "a text"), ("with", "built-in")],
        )
        .await;
    assert_eq!(down.status, StatusCode::OK);
    assert!(
        down.body
            .contains("the LLM did not answer: classifier unavailable"),
        "{}",
        down.body
    );

    // What cannot be tried is refused before the LLM is asked.
    let asked = lab.asked().len();
    for (form, why) in [
        (
            vec![
                ("text", "no placeholders"),
                ("sample", "a text"),
                ("with", "edited"),
            ],
            "lacks the placeholder {{categories}}",
        ),
        (
            vec![("text", GOOD), ("with", "edited")],
            "give a post id or paste a text",
        ),
        (
            vec![("text", GOOD), ("post_id", "999"), ("with", "edited")],
            "there is no post 999",
        ),
        (
            vec![("text", GOOD), ("post_id", "abc"), ("with", "edited")],
            "is not a post id",
        ),
        (
            vec![("sample", "a text"), ("with", "12345")],
            "no prompt version 12345",
        ),
    ] {
        let a = bed.post("/prompt/try", &s, &form).await;
        assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{form:?}");
        assert!(a.body.contains(&escaped(why)), "{why}: {}", a.body);
    }
    assert_eq!(lab.asked().len(), asked);
    // Trying changes nothing.
    assert_eq!(bed.store.current_prompt_version().await.unwrap(), None);
}

#[tokio::test]
async fn without_an_llm_trying_says_it_is_not_available() {
    let bed = bed(None).await;
    let s = bed.login().await;
    let a = bed
        .post(
            "/prompt/try",
            &s,
            &[("text", GOOD), ("sample", "a text"), ("with", "edited")],
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(
        a.body
            .contains("Trying is not available: no LLM is configured")
    );
    assert!(!a.body.contains("id=\"answer\""));
}
