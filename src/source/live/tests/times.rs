//! A valid Kubernetes time past jiff's range (the last day of year 9999)
//! read live: a list, a get by name and a watch each keep the object, so
//! the diagnosis is the one its neighbours' times give (crate::times).

use super::gate::gate_view;
use super::*;

/// A condition no rule reads, set at the last second Kubernetes accepts.
fn far_future_condition(o: &mut Value) {
    let kind = o["kind"].as_str().unwrap_or_default().to_string();
    let (field, extra) = match kind.as_str() {
        "Pod" => ("lastTransitionTime", "lastProbeTime"),
        "Deployment" | "ReplicaSet" => ("lastTransitionTime", "lastUpdateTime"),
        _ => return,
    };
    let condition = json!({
        "type": "example.com/Audited", "status": "True",
        field: "9999-12-31T23:59:59Z", extra: "9999-12-31T23:59:59.999999Z",
    });
    match o["status"]["conditions"].as_array_mut() {
        Some(conditions) => conditions.push(condition),
        None => o["status"]["conditions"] = json!([condition]),
    }
}

#[tokio::test(start_paused = true)]
async fn a_time_at_the_end_of_year_9999_keeps_its_object_in_lists_gets_and_watches() {
    let file = "fixtures/demo/healthy.yaml";
    let ns = "modeldock-lab";
    let target = mdiag_core::model::TargetSpec::parse("chart-demo", Some(ns)).unwrap();
    let now = fixture_now(file);
    let plain = fixture_objects(&[file]);
    // A Pod an endpoint names, moved out of the selector: the gate and the
    // targeted read get it by name.
    let mut objects = plain.clone();
    let named: Vec<String> = objects
        .iter()
        .filter(|o| o["kind"] == "EndpointSlice")
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e["targetRef"]["name"].as_str().map(str::to_string))
        .collect();
    let moved = objects
        .iter_mut()
        .find(|o| o["kind"] == "Pod" && named.iter().any(|n| o["metadata"]["name"] == *n))
        .expect("a Pod an endpoint names");
    moved["metadata"]["labels"] = json!({"moved": "out"});
    let moved_name = moved["metadata"]["name"].as_str().unwrap().to_string();
    let before = objects.clone();
    objects.iter_mut().for_each(far_future_condition);
    assert!(
        objects.iter().filter(|o| o["kind"] == "Pod").count() >= 2,
        "the fixture has Pods to mark"
    );

    let judged = |objects: Vec<Value>, targeted: bool| {
        let target = target.clone();
        async move {
            let fake = Fake::new();
            serve_objects(&fake, objects);
            let conn = fake.connection(ReadPolicy::default());
            traced(&conn, &target, ns, targeted, now).await
        }
    };
    let (_, expected) = judged(before.clone(), false).await;
    for targeted in [false, true] {
        let (snapshot, d) = judged(objects.clone(), targeted).await;
        assert_eq!(
            diagnosis_json(&d),
            diagnosis_json(&expected),
            "targeted: {targeted}"
        );
        let pod = snapshot
            .objects
            .pods
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(moved_name.as_str()))
            .expect("the moved Pod was read");
        let audited = pod.status.as_ref().unwrap().conditions.as_ref().unwrap();
        let audited = audited.iter().find(|c| c.type_ == "example.com/Audited");
        assert_eq!(
            audited
                .unwrap()
                .last_transition_time
                .as_ref()
                .unwrap()
                .0
                .to_string(),
            "9999-12-30T22:00:00Z",
            "held at the last second jiff holds"
        );
    }

    let fake = Fake::new();
    serve_objects(&fake, objects);
    let conn = fake.connection(ReadPolicy::default());
    let (view, _) = gate_view(&conn, &target, ns).await;
    let chain = mdiag_core::chain::walk(&view, &target, ns, None).unwrap();
    let gated = mdiag_core::analysis::analyze(&view, &chain, now);
    assert_eq!(
        diagnosis_json(&gated),
        diagnosis_json(&expected),
        "the gate's watches"
    );
    assert_eq!(
        view.objects.pods.len(),
        before.iter().filter(|o| o["kind"] == "Pod").count(),
        "every Pod, watched or got, is in the gate's view"
    );
}
