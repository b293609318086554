//! AntTracks memory-tree JSON: our trees round-trip exactly, AntTracks' own files import
//! into the same `Tree` type, malformed JSON is a clear error, and the memlens JSON
//! documents carry the contract's fields.

use memlens_heap::protocol::*;
use memlens_heap::*;

fn sample_trees() -> Trees {
    let mut b = HeapModelBuilder::new();
    b.start(0);
    b.name_thread(1, "main");
    let f = b.add_frame(FrameInfo {
        function: "load",
        ..Default::default()
    });
    let load = b.add_stack(StackId::ROOT, f);
    let f = b.add_frame(FrameInfo {
        function: "save",
        ..Default::default()
    });
    let save = b.add_stack(StackId::ROOT, f);
    for i in 0..20u64 {
        b.alloc(
            i * 1_000_000,
            1 + i % 2,
            0x1000 + i * 64,
            100 + i,
            if i % 3 == 0 { save } else { load },
            AllocKind::Malloc,
        );
    }
    let model = b.end(30_000_000);
    let query = TreeQuery {
        classifiers: parse_classifiers("site,thread", ClassifierOptions::default()).unwrap(),
        times: SnapshotTimes::Points(3),
        window: None,
        options: TreeOptions::default(),
    };
    memory_trees(&model, &query).unwrap()
}

#[test]
fn anttracks_round_trip_is_exact() {
    let trees = sample_trees();
    let first = &trees.trees[0];
    let json = tree_to_anttracks_json(&trees.classifiers, first);
    let (classifiers, tree) = tree_from_anttracks_json(&json).unwrap();
    assert_eq!(classifiers, trees.classifiers);
    assert_eq!(
        &tree, first,
        "the first tree of a series has zero growth, like an imported one"
    );
    let documents: Vec<String> = trees
        .trees
        .iter()
        .rev()
        .map(|t| tree_to_anttracks_json(&trees.classifiers, t))
        .collect();
    let refs: Vec<&str> = documents.iter().map(String::as_str).collect();
    let series = trees_from_anttracks_json(&refs).unwrap();
    assert_eq!(series.times_ns, trees.times_ns, "sorted by time again");
    assert_eq!(
        series.trees, trees.trees,
        "growth is recomputed from the earliest tree"
    );
}

#[test]
fn anttracks_shape_has_the_expected_fields() {
    let trees = sample_trees();
    let json = tree_to_anttracks_json(&trees.classifiers, &trees.trees[2]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["classifiers"][0]["name"], "Allocation Site");
    assert_eq!(value["classifiers"][1]["id"], 1);
    assert_eq!(value["time"], 30);
    assert_eq!(value["root"]["key"], "Overall");
    assert_eq!(value["root"]["fullKey"], serde_json::json!(["Overall"]));
    assert_eq!(value["root"]["classifierId"], -1);
    let child = &value["root"]["children"][0];
    assert_eq!(child["fullKey"][0], "Overall");
    assert_eq!(child["classifierId"], 0);
    assert_eq!(child["retainedSize"], -1);
    let grandchild = &child["children"][0];
    assert!(
        grandchild.get("children").is_none(),
        "leaves have no children field"
    );
    assert_eq!(
        grandchild["fullKeyAsString"],
        format!(
            "Overall -> {} -> {}",
            child["key"].as_str().unwrap(),
            grandchild["key"].as_str().unwrap()
        )
    );
}

#[test]
fn imports_a_file_written_by_anttracks() {
    let json = r#"{"classifiers":[{"name":"Type","id":0},{"name":"Allocation Site","id":1}],
        "time":226582,
        "root":{"key":"Overall","fullKey":["Overall"],"fullKeyAsString":"Overall","classifierId":-1,
          "bytes":300,"objects":3,"transitiveClosureSize":-1,"retainedSize":-1,
          "children":[
            {"key":"java.util.HashMap$Node","fullKey":["Overall","java.util.HashMap$Node"],"classifierId":0,
             "bytes":200,"objects":2,"children":[
               {"key":"Cache::put()","fullKey":["Overall","java.util.HashMap$Node","Cache::put()"],"classifierId":1,"bytes":200,"objects":2}]},
            {"key":"Other","fullKey":["Overall","Other"],"classifierId":0,"bytes":100,"objects":1}]}}"#;
    let (classifiers, tree) = tree_from_anttracks_json(json).unwrap();
    assert_eq!(
        classifiers[1],
        ClassifierInfo {
            name: "Allocation Site".into(),
            title: "Allocation Site".into()
        }
    );
    assert_eq!(tree.time_ns, 226_582_000_000);
    assert_eq!(tree.root.full_key, Vec::<String>::new());
    let site = &tree.root.children[0].children[0];
    assert_eq!(site.full_key, ["java.util.HashMap$Node", "Cache::put()"]);
    assert_eq!(site.classifier, Some(1));
    assert!(tree.root.children[1].is_other);
    assert_eq!(tree.root.children[1].sort_position, 1);
    let text = render_tree(&tree, &TextOptions::default());
    assert!(text.contains("Cache::put()"), "{text}");
}

#[test]
fn malformed_json_is_a_clear_error() {
    let err =
        tree_from_anttracks_json(r#"{"classifiers": [], "time": 1, "root": {"key": "Overall"#)
            .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("malformed AntTracks memory-tree JSON: "),
        "{err}"
    );
    assert!(err.to_string().contains("line 1"), "{err}");
    let err = tree_from_anttracks_json(r#"{"classifiers": [], "time": 1}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `root`"), "{err}");
    let err = tree_from_anttracks_json(
        r#"{"classifiers": [], "time": 1, "root": {"key": "Overall", "bytes": 1, "objects": 1,
            "children": [{"key": "a", "classifierId": 4, "bytes": 1, "objects": 1}]}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("classifier id 4"), "{err}");
}

#[test]
fn memlens_json_documents_carry_the_contract_fields() {
    let trees = sample_trees();
    let value: serde_json::Value = serde_json::from_str(&trees_to_json(&trees)).unwrap();
    assert_eq!(value["classifiers"], serde_json::json!(["site", "thread"]));
    assert_eq!(value["times_ns"].as_array().unwrap().len(), 3);
    let root = &value["trees"][2]["root"];
    for field in [
        "key",
        "bytes",
        "objects",
        "children",
        "full_key",
        "sort_position",
    ] {
        assert!(root.get(field).is_some(), "root lacks {field}");
    }
    assert_eq!(value["trees"][2]["time_ns"], 30_000_000);
    let suspects = vec![Suspect {
        key: "load".into(),
        full_key: vec!["load".into()],
        growth_bytes: 10,
        growth_objects: 1,
        start_bytes: 0,
        end_bytes: 10,
        max_bytes: 10,
        live_at_exit_bytes: 10,
        live_at_exit_objects: 1,
        monotonicity: 1.0,
        r_squared: 1.0,
        slope_bytes_per_s: 1.0,
        persistence: 1.0,
        score: 10.0,
    }];
    let value: serde_json::Value = serde_json::from_str(&suspects_to_json(&suspects)).unwrap();
    for field in ["key", "growth_bytes", "start_bytes", "end_bytes", "score"] {
        assert!(
            value["suspects"][0].get(field).is_some(),
            "suspect lacks {field}"
        );
    }
}
