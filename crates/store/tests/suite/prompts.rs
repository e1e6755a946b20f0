//! The classification prompt's versions: unique names, newest first, and the current one is
//! whichever was activated last (recorded who and when).

use super::*;

pub async fn check_prompt_versions(store: &dyn Store) {
    assert_eq!(store.current_prompt_version().await.unwrap(), None);
    assert!(store.prompt_versions().await.unwrap().is_empty());

    let v5 = store
        .create_prompt_version(
            "classify.v5",
            "Five {{categories}}{{reason}}",
            "alice",
            t0(),
        )
        .await
        .unwrap()
        .expect("a new version");
    assert_eq!(
        (
            v5.name.as_str(),
            v5.text.as_str(),
            v5.created_by.as_str(),
            v5.created_at
        ),
        (
            "classify.v5",
            "Five {{categories}}{{reason}}",
            "alice",
            t0()
        )
    );
    assert_eq!((v5.activated_by.as_deref(), v5.activated_at), (None, None));
    assert_eq!(
        store
            .create_prompt_version("classify.v5", "other", "bob", t0() + secs(1))
            .await
            .unwrap(),
        None,
        "a taken name is refused"
    );
    let v6 = store
        .create_prompt_version(
            "classify.v6",
            "Six {{categories}}{{reason}}",
            "bob",
            t0() + secs(2),
        )
        .await
        .unwrap()
        .expect("a new version");
    let names: Vec<String> = store
        .prompt_versions()
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.name)
        .collect();
    assert_eq!(names, ["classify.v6", "classify.v5"], "newest first");
    assert_eq!(store.prompt_version(v5.id).await.unwrap(), Some(v5.clone()));
    assert_eq!(
        store
            .prompt_version(PromptVersionId(v6.id.get() + 100))
            .await
            .unwrap(),
        None
    );
    // Created is not current.
    assert_eq!(store.current_prompt_version().await.unwrap(), None);

    assert!(
        store
            .activate_prompt_version(v5.id, "alice", t0() + secs(10))
            .await
            .unwrap()
    );
    let current = store.current_prompt_version().await.unwrap().unwrap();
    assert_eq!(current.name, "classify.v5");
    assert_eq!(
        (current.activated_by.as_deref(), current.activated_at),
        (Some("alice"), Some(t0() + secs(10)))
    );

    assert!(
        store
            .activate_prompt_version(v6.id, "bob", t0() + secs(20))
            .await
            .unwrap()
    );
    assert_eq!(
        store.current_prompt_version().await.unwrap().unwrap().name,
        "classify.v6"
    );
    // Back to v5 within the same millisecond: the last activation still wins.
    assert!(
        store
            .activate_prompt_version(v5.id, "carol", t0() + secs(20))
            .await
            .unwrap()
    );
    let current = store.current_prompt_version().await.unwrap().unwrap();
    assert_eq!(
        (current.name.as_str(), current.activated_by.as_deref()),
        ("classify.v5", Some("carol"))
    );
    // The other keeps the record of its own activation.
    let v6 = store.prompt_version(v6.id).await.unwrap().unwrap();
    assert_eq!(
        (v6.activated_by.as_deref(), v6.activated_at),
        (Some("bob"), Some(t0() + secs(20)))
    );

    assert!(
        !store
            .activate_prompt_version(PromptVersionId(v6.id.get() + 100), "alice", t0() + secs(30))
            .await
            .unwrap(),
        "no such version"
    );
    assert_eq!(
        store.current_prompt_version().await.unwrap().unwrap().name,
        "classify.v5"
    );
}
