//! The Categories page: each category's name (the bots' menus, the cards, the digest), its
//! description (listed in the LLM prompt), the bot that delivers it and whether the daily
//! digest includes it. A change is stored with who made it and applies in every running
//! process within seconds (they follow the categories' version); the set of categories is
//! the configuration's (the classifier's labels), so categories are edited, not added here.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_store::{CategoryFields, CategoryRow};
use serde::Deserialize;

use super::when;
use super::{AuditNote, Chrome, Ctx, PageResult, Panel, PanelError, form_field, see_other};

/// The longest name, in characters (a button label in the bots).
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description, in characters (one line of the LLM prompt per category).
pub const MAX_DESCRIPTION_CHARS: usize = 400;

/// One problem with a submitted category, named by its form field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

/// Checks a category as submitted: a name of 1 to [`MAX_NAME_CHARS`] characters, a
/// description of at most [`MAX_DESCRIPTION_CHARS`] on one line, a bot among `bots` (when
/// any are known).
pub fn check(fields: &CategoryFields, bots: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut error = |field, message: String| errors.push(FieldError { field, message });
    let name = fields.name.chars().count();
    if fields.name.trim().is_empty() {
        error("name", "a category needs a name".to_owned());
    } else if name > MAX_NAME_CHARS {
        error(
            "name",
            format!("{name} characters; at most {MAX_NAME_CHARS}"),
        );
    }
    if fields.name.chars().any(char::is_control) {
        error("name", "one line, without control characters".to_owned());
    }
    let description = fields.description.chars().count();
    if description > MAX_DESCRIPTION_CHARS {
        error(
            "description",
            format!("{description} characters; at most {MAX_DESCRIPTION_CHARS}"),
        );
    }
    if fields.description.chars().any(char::is_control) {
        error(
            "description",
            "one line (it is one line of the LLM prompt)".to_owned(),
        );
    }
    if !bots.is_empty() && !bots.contains(&fields.bot) {
        error("bot", format!("no bot named {:?} in [[bots]]", fields.bot));
    }
    errors
}

/// One category as the page shows it.
struct Line {
    slug: String,
    name: String,
    description: String,
    bot: String,
    digest: bool,
    changed: String,
    errors: Vec<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "categories.html")]
struct CategoriesPage {
    b: Chrome,
    lines: Vec<Line>,
    bots: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct Saved {
    saved: Option<String>,
}

fn line(row: &CategoryRow) -> Line {
    Line {
        slug: row.slug.to_string(),
        name: row.name.clone(),
        description: row.description.clone(),
        bot: row.bot.clone(),
        digest: row.digest,
        changed: match &row.updated_by {
            Some(by) => format!("{by}, {}", when(&row.updated_at)),
            None => String::new(),
        },
        errors: Vec::new(),
    }
}

/// The stored categories in the configured order (those the configuration no longer names
/// are left out), and the bots to choose from.
async fn lines(panel: &Panel) -> Result<(Vec<Line>, Vec<String>), PanelError> {
    let rows = panel.store().categories().await?;
    let setup = panel.state.category_setup().clone();
    let mut order = setup.order.clone();
    if order.is_empty() {
        order = panel.categories();
    }
    let lines = order
        .iter()
        .filter_map(|slug| rows.iter().find(|r| r.slug.as_str() == slug))
        .map(line)
        .collect();
    let mut bots = setup.bots;
    if bots.is_empty() {
        bots = rows.iter().map(|r| r.bot.clone()).collect();
        bots.sort();
        bots.dedup();
    }
    Ok((lines, bots))
}

/// `GET /categories`.
pub async fn page(State(panel): State<Arc<Panel>>, ctx: Ctx, Query(q): Query<Saved>) -> PageResult {
    let (lines, bots) = lines(&panel).await?;
    let mut b = ctx.chrome("/categories");
    if let Some(slug) = q.saved {
        b.flash = Some(format!("{} {slug}", ctx.t.category_saved));
    }
    Ok(CategoriesPage { b, lines, bots }.into_response())
}

/// `POST /categories/{slug}` (`name`, `description`, `bot`, `digest` = `1` when checked):
/// stores the category as given, or shows the page again with what is wrong (nothing
/// stored).
pub async fn update(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(slug): Path<String>,
    body: Bytes,
) -> PageResult {
    let slug = CategorySlug::parse(&slug).map_err(|_| PanelError::NotFound)?;
    let (mut lines, bots) = lines(&panel).await?;
    let Some(at) = lines.iter().position(|l| l.slug == slug.as_str()) else {
        return Err(PanelError::NotFound);
    };
    let fields = CategoryFields {
        name: form_field(&body, "name")
            .unwrap_or_default()
            .trim()
            .to_owned(),
        description: form_field(&body, "description")
            .unwrap_or_default()
            .trim()
            .to_owned(),
        bot: form_field(&body, "bot")
            .unwrap_or_default()
            .trim()
            .to_owned(),
        digest: form_field(&body, "digest").is_some_and(|v| v == "1" || v == "on"),
    };
    let errors = check(&fields, &bots);
    if !errors.is_empty() {
        let shown = &mut lines[at];
        shown.name = fields.name;
        shown.description = fields.description;
        shown.bot = fields.bot;
        shown.digest = fields.digest;
        shown.errors = errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        let mut r = CategoriesPage {
            b: ctx.chrome("/categories"),
            lines,
            bots,
        }
        .into_response();
        *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(r);
    }
    let before = &lines[at];
    let mut changed = Vec::new();
    if before.name != fields.name {
        changed.push(format!("name: {} → {}", before.name, fields.name));
    }
    if before.description != fields.description {
        changed.push("description".to_owned());
    }
    if before.bot != fields.bot {
        changed.push(format!("bot: {} → {}", before.bot, fields.bot));
    }
    if before.digest != fields.digest {
        changed.push(format!(
            "digest: {}",
            if fields.digest { "on" } else { "off" }
        ));
    }
    panel
        .store()
        .update_category(&slug, &fields, &ctx.session.username, Utc::now())
        .await?
        .ok_or(PanelError::NotFound)?;
    tracing::info!(user = %ctx.session.username, category = %slug, "panel: category changed");
    let mut r = see_other(&format!("/categories?saved={slug}#c-{slug}"));
    r.extensions_mut().insert(AuditNote {
        action: "category.update",
        target: format!("category {slug}"),
        detail: if changed.is_empty() {
            "unchanged".to_owned()
        } else {
            changed.join("; ")
        },
    });
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(name: &str, description: &str, bot: &str) -> CategoryFields {
        CategoryFields {
            name: name.to_owned(),
            description: description.to_owned(),
            bot: bot.to_owned(),
            digest: true,
        }
    }

    #[test]
    fn each_problem_names_its_field() {
        let bots = vec!["dev".to_owned()];
        assert!(check(&fields("Web", "sites", "dev"), &bots).is_empty());
        let named = |f: &CategoryFields| -> Vec<&'static str> {
            check(f, &bots).iter().map(|e| e.field).collect()
        };
        assert_eq!(named(&fields(" ", "", "dev")), ["name"]);
        assert_eq!(named(&fields(&"x".repeat(65), "", "dev")), ["name"]);
        assert_eq!(named(&fields("Web", "two\nlines", "dev")), ["description"]);
        assert_eq!(
            named(&fields("Web", &"d".repeat(401), "dev")),
            ["description"]
        );
        assert_eq!(named(&fields("Web", "", "other")), ["bot"]);
        assert!(
            check(&fields("Web", "", "other"), &[]).is_empty(),
            "no bots known"
        );
    }
}
