//! The serving platforms' resources, found by discovery from the platform
//! table: each in the version its group prefers, a platform not installed
//! simply absent, and a target of one not installed said so.

use super::*;

fn resource(group: &str, version: &str, plural: &str, kind: &str) -> Value {
    json!({"resource": plural, "scope": "Namespaced", "verbs": ["get", "list", "watch"],
        "responseKind": {"group": group, "version": version, "kind": kind}})
}

fn discovery(groups: Vec<Value>) -> Fake {
    let fake = Fake::new();
    fake.otherwise(move |path, _| {
        (path == "/apis").then(|| {
            ok(
                json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
                "metadata": {}, "items": groups.clone()}),
            )
        })
    });
    fake
}

#[tokio::test]
async fn every_platform_of_the_table_is_found_in_its_preferred_version() {
    use mdiag_core::model::Kind;
    let fake = discovery(vec![
        json!({"metadata": {"name": "serving.kserve.io"}, "versions": [
            {"version": "v1beta1", "resources": [resource("serving.kserve.io", "v1beta1", "inferenceservices", "InferenceService")]},
            {"version": "v1alpha1", "resources": [resource("serving.kserve.io", "v1alpha1", "inferenceservices", "InferenceService")]}]}),
        json!({"metadata": {"name": "argoproj.io"}, "versions": [
            {"version": "v1alpha1", "resources": [
                resource("argoproj.io", "v1alpha1", "analysisruns", "AnalysisRun"),
                resource("argoproj.io", "v1alpha1", "rollouts", "Rollout")]}]}),
    ]);
    let conn = fake.connection(ReadPolicy::default());
    let served = discover_served(&conn, "msvc").await.unwrap();
    let version = |kind| served.platforms.get(kind).map(|r| r.api_version.clone());
    assert_eq!(
        version(Kind::InferenceService).as_deref(),
        Some("serving.kserve.io/v1beta1")
    );
    assert_eq!(
        version(Kind::Rollout).as_deref(),
        Some("argoproj.io/v1alpha1")
    );
    assert!(served.model_service.is_none());

    // Argo not installed: no Rollouts, and no error.
    let fake = discovery(vec![]);
    let conn = fake.connection(ReadPolicy::default());
    let served = discover_served(&conn, "msvc").await.unwrap();
    assert!(served.platforms.get(Kind::Rollout).is_none());
}

#[test]
fn a_platform_not_installed_is_said_as_one() {
    for kind in [
        mdiag_core::model::Kind::InferenceService,
        mdiag_core::model::Kind::Rollout,
    ] {
        let err = LiveError::NoResource {
            wanted: platform_resource(kind),
        };
        let said = mdiag_core::catalogue::Localized::message(&err).en();
        assert!(
            said.contains("the platform is not installed there"),
            "{said}"
        );
    }
    let err = LiveError::NoResource {
        wanted: "msvc".into(),
    };
    let said = mdiag_core::catalogue::Localized::message(&err).en();
    assert!(said.contains("ModelService CRD"), "{said}");
}
