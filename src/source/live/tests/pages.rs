//! Pages: followed with limit and continue, relisted when a continue
//! token expires (up to the policy's limit), and trimmed as they arrive.

use super::*;

#[tokio::test]
async fn pages_are_followed_with_limit_and_continue() {
    let fake = Fake::new();
    fake.script(
        "continue=t1",
        vec![ok(list("Pod", vec![pod("a", "p3")], None))],
    );
    fake.script(
        PODS,
        vec![ok(list(
            "Pod",
            vec![pod("a", "p1"), pod("a", "p2")],
            Some("t1"),
        ))],
    );
    let policy = ReadPolicy {
        page_size: 2,
        ..ReadPolicy::default()
    };
    let conn = fake.connection(policy);
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    assert_eq!(names(&pods), ["p1", "p2", "p3"]);
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[0].contains("limit=2") && !seen[0].contains("continue"),
        "{seen:?}"
    );
    assert!(
        seen[1].contains("limit=2") && seen[1].contains("continue=t1"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_expired_continue_token_relists_from_the_first_page() {
    let fake = Fake::new();
    fake.script(
        "continue=old",
        vec![failure(
            410,
            "Expired",
            "The provided continue parameter is too old to display a consistent list result.",
        )],
    );
    fake.script(
        "continue=fresh",
        vec![ok(list("Pod", vec![pod("a", "p3")], None))],
    );
    fake.script(
        PODS,
        vec![
            ok(list(
                "Pod",
                vec![pod("a", "p1"), pod("a", "p2")],
                Some("old"),
            )),
            ok(list(
                "Pod",
                vec![pod("a", "p1"), pod("a", "p2")],
                Some("fresh"),
            )),
        ],
    );
    let conn = fake.connection(ReadPolicy::default());
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    // Each Pod once: the first, abandoned pass is not kept.
    assert_eq!(names(&pods), ["p1", "p2", "p3"]);
    assert_eq!(conn.requests(), 4);
    let seen = fake.seen();
    assert!(
        !seen[2].contains("continue"),
        "the relist starts over: {seen:?}"
    );
}

#[tokio::test]
async fn relists_stop_after_the_policy_limit() {
    let fake = Fake::new();
    fake.otherwise(|_, query| {
        Some(if query.contains("continue") {
            failure(410, "Expired", "too old")
        } else {
            ok(list("Pod", vec![pod("a", "p1")], Some("old")))
        })
    });
    let policy = ReadPolicy {
        max_relists: 2,
        ..ReadPolicy::default()
    };
    let conn = fake.connection(policy);
    let err = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 410));
    // Three passes of two requests: the first and two relists.
    assert_eq!(conn.requests(), 6);
}

#[tokio::test]
async fn pages_are_trimmed_as_they_arrive() {
    let fake = Fake::new();
    fake.script(PODS, vec![ok(list("Pod", vec![pod("a", "p1")], None))]);
    let conn = fake.connection(ReadPolicy::default());
    let trimmed = |p: &mut Pod| {
        trim_meta(&mut p.metadata, ManagedFields::Drop);
        true
    };
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &trimmed)
        .await
        .unwrap();
    let meta = &pods[0].metadata;
    assert!(meta.managed_fields.is_none());
    let annotations = meta.annotations.as_ref().unwrap();
    assert!(!annotations.contains_key(LAST_APPLIED));
    assert_eq!(annotations.get("team").map(String::as_str), Some("serving"));

    // A spec write and a status write, as a Deployment carries them.
    let mut deployment_like: Pod = serde_json::from_value(pod("a", "p2")).unwrap();
    let spec_write: k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry =
        serde_json::from_value(json!({"manager": "kubectl-edit", "operation": "Update",
            "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}}))
        .unwrap();
    deployment_like
        .metadata
        .managed_fields
        .as_mut()
        .unwrap()
        .push(spec_write);
    let kept = |managed: ManagedFields| {
        let mut meta = deployment_like.metadata.clone();
        trim_meta(&mut meta, managed);
        assert!(!meta.annotations.unwrap().contains_key(LAST_APPLIED));
        meta.managed_fields.map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e.manager.clone().unwrap(),
                        e.time.is_some(),
                        e.fields_v1.is_some(),
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(kept(ManagedFields::Drop), None);
    assert_eq!(
        kept(ManagedFields::Writes),
        Some(vec![
            ("kubelet".into(), false, false),
            ("kubectl-edit".into(), true, false)
        ]),
        "who wrote and when, not what"
    );
    assert_eq!(
        kept(ManagedFields::Fields),
        Some(vec![
            ("kubelet".into(), false, false),
            ("kubectl-edit".into(), true, true)
        ]),
        "the fields written to the main resource, not the status's"
    );
}
