//! Bad query arguments are error values with messages that name the problem: unknown
//! classifiers (listing the valid ones), zero snapshot times, times outside the run
//! (naming the run's range), no marks.

use memlens_heap::*;

fn model() -> HeapModel {
    let mut b = HeapModelBuilder::new();
    b.alloc(1_000_000_000, 1, 0x10, 8, StackId::ROOT, AllocKind::Malloc);
    b.mark(1_500_000_000, "warm");
    b.end(3_000_000_000)
}

fn chain() -> ClassifierChain {
    parse_classifiers("site", ClassifierOptions::default()).unwrap()
}

#[test]
fn unknown_classifier_lists_the_valid_choices() {
    let err = parse_classifiers("site,heap-type", ClassifierOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown classifier `heap-type`; valid classifiers are: site, site-line, closest-user-frame, call-path, \
         module, thread, size-class, age, lifetime, type, closest-domain-site, data-structure"
    );
}

#[test]
fn zero_snapshot_times_is_an_error() {
    let m = model();
    assert_eq!(
        SnapshotTimes::Points(0).resolve(&m, None),
        Err(HeapError::NoSnapshotTimes)
    );
    assert_eq!(
        SnapshotTimes::Explicit(vec![]).resolve(&m, None),
        Err(HeapError::NoSnapshotTimes)
    );
    assert!(matches!(
        TreeSeries::compute(&m, &chain(), &[]),
        Err(HeapError::NoSnapshotTimes)
    ));
    assert!(
        HeapError::NoSnapshotTimes
            .to_string()
            .contains("zero were requested")
    );
}

#[test]
fn time_outside_the_run_names_the_range() {
    let m = model();
    let err = SnapshotTimes::Explicit(vec![2_000_000_000, 5_000_000_000])
        .resolve(&m, None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "time 5 s (5000000000 ns) is outside the recorded run, which spans 1 s (1000000000 ns) to 3 s (3000000000 ns)"
    );
    assert!(matches!(
        TreeSeries::compute(&m, &chain(), &[10]),
        Err(HeapError::TimeOutsideRun { time_ns: 10, .. })
    ));
    let mut series = TreeSeries::compute(&m, &chain(), &[2_000_000_000]).unwrap();
    assert!(matches!(
        series.add_time(4_000_000_000),
        Err(HeapError::TimeOutsideRun { .. })
    ));
}

#[test]
fn marks_points_and_peaks_resolve_inside_the_run() {
    let m = model();
    assert_eq!(
        SnapshotTimes::Marks.resolve(&m, None).unwrap(),
        vec![1_500_000_000]
    );
    let window = TimeWindow {
        start_ns: 2_000_000_000,
        end_ns: 3_000_000_000,
    };
    assert!(matches!(
        SnapshotTimes::Marks.resolve(&m, Some(window)),
        Err(HeapError::NoMarks { .. })
    ));
    assert_eq!(
        SnapshotTimes::Points(4).resolve(&m, None).unwrap(),
        vec![1_500_000_000, 2_000_000_000, 2_500_000_000, 3_000_000_000]
    );
    assert_eq!(
        SnapshotTimes::peaks_and_dips().resolve(&m, None).unwrap(),
        vec![1_000_000_000]
    );
}
