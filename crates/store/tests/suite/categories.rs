//! Categories as data: the seed writes only what the database lacks, an edit records who and
//! when, and every change bumps the version the running processes poll.

use super::*;

fn fields(name: &str, bot: &str) -> CategoryFields {
    CategoryFields {
        name: name.to_owned(),
        description: format!("{name} work"),
        bot: bot.to_owned(),
        digest: true,
    }
}

pub async fn check_categories(store: &dyn Store) {
    let web = CategorySlug::parse("web").unwrap();
    let bots = CategorySlug::parse("bots").unwrap();
    let v0 = store.categories_version().await.unwrap();
    let seeds = vec![
        (web.clone(), fields("Web", "dev")),
        (bots.clone(), fields("Bots", "dev")),
    ];
    assert_eq!(store.seed_categories(&seeds, t0()).await.unwrap(), 2);
    let v1 = store.categories_version().await.unwrap();
    assert!(v1 > v0, "a seed that wrote rows bumps the version");

    // An admin renames one, moves it to another bot and leaves it out of the digest.
    let edit = CategoryFields {
        name: "Сайты & <web>".to_owned(),
        description: "sites, landing pages".to_owned(),
        bot: "creative".to_owned(),
        digest: false,
    };
    let row = store
        .update_category(&web, &edit, "ops", t0() + secs(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.name, "Сайты & <web>");
    assert_eq!(row.bot, "creative");
    assert!(!row.digest);
    assert_eq!(row.updated_by.as_deref(), Some("ops"));
    assert_eq!(row.updated_at, t0() + secs(5));
    let v2 = store.categories_version().await.unwrap();
    assert!(v2 > v1, "an edit bumps the version");

    // The next start seeds the file's categories again: the edit stays, nothing is written.
    assert_eq!(
        store.seed_categories(&seeds, t0() + secs(9)).await.unwrap(),
        0
    );
    assert_eq!(store.categories_version().await.unwrap(), v2);
    let all = store.categories().await.unwrap();
    assert_eq!(all.len(), 2);
    let stored = all.iter().find(|c| c.slug == web).unwrap();
    assert_eq!(stored.description, "sites, landing pages");
    assert!(!stored.digest);
    let other = all.iter().find(|c| c.slug == bots).unwrap();
    assert_eq!(other.updated_by, None);
    assert!(other.digest);

    // An unknown category is not created by an edit.
    let nope = CategorySlug::parse("nope").unwrap();
    assert!(
        store
            .update_category(&nope, &edit, "ops", t0())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(store.categories_version().await.unwrap(), v2);
}
