//! The journal against its contract: order, indexes, groups, the feed, attachments, numbering
//! and compatibility with journals written before.

use super::*;

/// Opens the journal again right after dropping it. sled's background threads may still
/// hold the directory's lock for a moment after the drop, so `Locked` is retried briefly.
fn reopen(dir: &Path) -> Journal<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match Journal::open(dir, "j") {
            Err(JournalError::Locked(_)) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => return result.unwrap(),
        }
    }
}

#[test]
fn records_survive_reopen_in_order_with_their_indexes() {
    let dir = tempfile::tempdir().unwrap();
    {
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        assert_eq!(journal.append(&"a".into(), &[("key", "k1")]).unwrap(), 0);
        assert_eq!(
            journal
                .append(&"b".into(), &[("key", "k2"), ("ref", "r2")])
                .unwrap(),
            1
        );
        journal.replace(0, &"a2".into()).unwrap();
    }
    let journal = reopen(dir.path());
    assert_eq!(journal.all().unwrap(), vec!["a2".to_string(), "b".into()]);
    assert_eq!(journal.find("ref", "r2").unwrap(), Some((1, "b".into())));
    assert_eq!(journal.find("key", "k1").unwrap(), Some((0, "a2".into())));
    assert_eq!(journal.find("ref", "k1").unwrap(), None);
    // The same question without reading the record, per index.
    assert!(journal.contains("ref", "r2").unwrap());
    assert!(journal.contains("key", "k1").unwrap());
    assert!(!journal.contains("ref", "k1").unwrap());
    assert!(!journal.contains("key", "k3").unwrap());
    assert_eq!(journal.range(1, 10).unwrap(), vec![(1, "b".to_string())]);
    assert_eq!(journal.range(0, 1).unwrap().len(), 1);
    // Numbering goes on where the journal left off.
    assert_eq!(journal.append(&"c".into(), &[]).unwrap(), 2);
    assert_eq!(journal.next_seq().unwrap(), 3);
}

#[test]
fn an_attachment_is_written_once_and_outlives_the_records_later_states() {
    let dir = tempfile::tempdir().unwrap();
    {
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        let seq = journal
            .append_attached(&"new".into(), b"\x00bytes", &[], &[("open", "")])
            .unwrap();
        journal.append(&"plain".into(), &[]).unwrap();
        journal.replace(seq, &"replaced".into()).unwrap();
        journal
            .settle(&[(seq, "settled".into())], &[("open", "")])
            .unwrap();
    }
    let journal = reopen(dir.path());
    assert_eq!(journal.get(0).unwrap().as_deref(), Some("settled"));
    assert_eq!(
        journal.attachment(0).unwrap().as_deref(),
        Some(&b"\x00bytes"[..])
    );
    assert_eq!(journal.attachment(1).unwrap(), None);
    // Attachments are not records: they neither count nor show up in the record ranges.
    assert_eq!(journal.next_seq().unwrap(), 2);
    assert_eq!(
        journal.all().unwrap(),
        vec!["settled".to_string(), "plain".into()]
    );
}

#[test]
fn records_written_before_packing_read_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    {
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        // As an earlier version stored a record: its plain JSON.
        journal
            .on(|db| {
                db.tree
                    .insert(record_key(0), &b"\"plain\""[..])
                    .map_err(backend)
            })
            .unwrap();
    }
    let journal = reopen(dir.path());
    assert_eq!(journal.get(0).unwrap().as_deref(), Some("plain"));
    assert_eq!(journal.append(&"packed".into(), &[]).unwrap(), 1);
    assert_eq!(
        journal.all().unwrap(),
        vec!["plain".to_string(), "packed".into()]
    );
    let stored = journal.on(|db| db.tree.get(record_key(1)).map_err(backend));
    assert_ne!(stored.unwrap().unwrap()[0], b'"');
}

#[test]
fn a_journal_packed_quick_writes_quick_and_reads_what_was_packed_small() {
    let dir = tempfile::tempdir().unwrap();
    // Text varied enough that codes fitted to it beat the fixed ones.
    let long = |word: &str| -> String {
        (0..400)
            .map(|i| format!("{word}{} ", i * 7919 % 1000))
            .collect()
    };
    {
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        journal
            .append_attached(&long("small"), long("body one").as_bytes(), &[], &[])
            .unwrap();
    }
    // How a value is packed: `[0, 1]` deflated (with codes fitted to the value: block type
    // 0b10 in bits 1 and 2 of the next byte), `[0, 2]` LZ4.
    let packed_as = |journal: &Journal<String>, key: Vec<u8>| {
        let stored = journal.on(|db| db.tree.get(key).map_err(backend));
        let stored = stored.unwrap().unwrap();
        match stored[..2] {
            [0, 1] => format!("deflate {:02b}", (stored[2] >> 1) & 0b11),
            [0, 2] => "lz4".to_owned(),
            _ => panic!("not packed: {:?}", &stored[..2]),
        }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let journal: Journal<String> = loop {
        match Journal::open_packed(dir.path(), "j", Packing::Quick) {
            Err(JournalError::Locked(_)) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => break result.unwrap(),
        }
    };
    journal
        .append_attached(&long("quick"), long("body two").as_bytes(), &[], &[])
        .unwrap();
    assert_eq!(packed_as(&journal, record_key(0)), "deflate 10");
    assert_eq!(packed_as(&journal, attachment_key(0)), "deflate 10");
    assert_eq!(packed_as(&journal, record_key(1)), "lz4");
    assert_eq!(packed_as(&journal, attachment_key(1)), "lz4");
    assert_eq!(journal.all().unwrap(), vec![long("small"), long("quick")]);
    assert_eq!(
        journal.attachment(0).unwrap(),
        Some(long("body one").into_bytes())
    );
    assert_eq!(
        journal.attachment(1).unwrap(),
        Some(long("body two").into_bytes())
    );
}

/// What four threads appending 25 records each at once got back, `append(writer, i)` each.
fn by_four_writers<R: Send>(append: impl Fn(usize, usize) -> R + Sync) -> Vec<R> {
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..4)
            .map(|writer| {
                let append = &append;
                scope.spawn(move || (0..25).map(|i| append(writer, i)).collect::<Vec<_>>())
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

#[test]
fn concurrent_appends_get_every_number_once() {
    let dir = tempfile::tempdir().unwrap();
    let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
    let mut seqs =
        by_four_writers(|writer, i| journal.append(&format!("{writer}/{i}"), &[]).unwrap());
    seqs.sort_unstable();
    assert_eq!(seqs, (0..100).collect::<Vec<_>>());
    assert_eq!(journal.all().unwrap().len(), 100);
}

/// A record built as its number is taken: built in the order of the numbers, whatever the
/// threads, and handed back as stored; a key already taken refuses it.
#[test]
fn a_record_built_at_numbering_is_numbered_in_the_order_it_was_built() {
    let dir = tempfile::tempdir().unwrap();
    let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
    let built = std::sync::atomic::AtomicU64::new(0);
    let appended = by_four_writers(|writer, i| {
        let key = format!("{writer}/{i}");
        let stamp = || {
            let order = built.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            format!("{order}:{key}")
        };
        journal
            .append_attached_with(b"body", &[("key", &key)], &[], stamp)
            .unwrap()
    });
    for (seq, record) in &appended {
        let order: u64 = record.split(':').next().unwrap().parse().unwrap();
        assert_eq!(order, *seq, "{record}");
        assert_eq!(journal.get(*seq).unwrap().as_ref(), Some(record));
        assert_eq!(
            journal.attachment(*seq).unwrap().as_deref(),
            Some(&b"body"[..])
        );
    }
    assert_eq!(appended.len(), 100);
    let refused =
        journal.append_attached_with(b"again", &[("key", "0/0")], &[], || "second".to_owned());
    assert!(
        matches!(refused, Err(JournalError::Taken(_))),
        "{refused:?}"
    );
    assert_eq!(journal.all().unwrap().len(), 100);
}

#[test]
fn an_index_key_names_one_record_and_a_second_append_under_it_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
    let first = journal
        .append_grouped(&"first".into(), &[("key", "k")], &[("report", "r")])
        .unwrap();
    let refused = journal.append_attached(
        &"second".into(),
        b"body",
        &[("other", "o"), ("key", "k")],
        &[("report", "r")],
    );
    assert_eq!(refused, Err(JournalError::Taken("key k".into())));
    // Nothing of the refused append is left: no record, no attachment, no index or group entry.
    assert_eq!(journal.all().unwrap(), vec!["first".to_string()]);
    assert_eq!(journal.find("other", "o").unwrap(), None);
    assert_eq!(journal.find_all("report", "r").unwrap().len(), 1);
    assert_eq!(
        journal.find("key", "k").unwrap(),
        Some((first, "first".into()))
    );
    // The journal goes on; a refused append's number stays unused.
    let third = journal.append(&"third".into(), &[("key", "k3")]).unwrap();
    assert!(third > first);
    assert_eq!(journal.attachment(first + 1).unwrap(), None);
    drop(journal);
    let journal = reopen(dir.path());
    assert_eq!(journal.all().unwrap(), vec!["first", "third"]);
    assert_eq!(
        journal.find("key", "k3").unwrap(),
        Some((third, "third".into()))
    );
}

#[tokio::test]
async fn queued_appends_are_numbered_at_once_and_land_whether_or_not_anyone_waits() {
    let dir = tempfile::tempdir().unwrap();
    {
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        let committed = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let queue = |name: &str, key: &str| {
            let committed = std::sync::Arc::clone(&committed);
            journal.queue_attached_with(
                name.as_bytes(),
                &[("key", key)],
                &[("all", "")],
                || name.to_string(),
                move |seq, record: &String| committed.lock().unwrap().push((seq, record.clone())),
            )
        };
        // Three queued from one task before any is waited for, the second one twice over.
        let first = queue("first", "k1").unwrap();
        let second = queue("second", "k2").unwrap();
        let twin = queue("twin", "k2").unwrap();
        let unwaited = queue("unwaited", "k4").unwrap();
        assert_eq!(first.durable().await.unwrap(), (0, "first".to_string()));
        assert_eq!(
            twin.durable().await,
            Err(JournalError::Taken("key k2".into()))
        );
        assert_eq!(second.durable().await.unwrap(), (1, "second".to_string()));
        // Nobody waits for the last one: it lands all the same.
        drop(unwaited);
        journal.on(|db| db.flush()).unwrap();
        // The after-commit step ran for each committed append, in order, and not for the twin.
        let steps = committed.lock().unwrap().clone();
        let expected = [(0, "first"), (1, "second"), (3, "unwaited")];
        assert_eq!(steps, expected.map(|(seq, name)| (seq, name.to_string())));
    }
    let journal = reopen(dir.path());
    assert_eq!(journal.all().unwrap(), vec!["first", "second", "unwaited"]);
    assert_eq!(
        journal.find("key", "k4").unwrap(),
        Some((3, "unwaited".into()))
    );
    assert_eq!(journal.attachment(1).unwrap(), Some(b"second".to_vec()));
    assert_eq!(journal.attachment(2).unwrap(), None);
}

#[test]
fn groups_hold_many_records_per_key_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
    for (i, report) in ["r1", "r2", "r1", "r10", "r1"].iter().enumerate() {
        let record = format!("{report}#{i}");
        journal
            .append_grouped(&record, &[("key", &record)], &[("report", report)])
            .unwrap();
    }
    let seqs = |found: Vec<(u64, String)>| found.into_iter().map(|(s, _)| s).collect::<Vec<_>>();
    assert_eq!(
        seqs(journal.find_all("report", "r1").unwrap()),
        vec![0, 2, 4]
    );
    // "r1" is a prefix of "r10" as text, but not as a group key.
    assert_eq!(
        journal.find_all("report", "r10").unwrap(),
        vec![(3, "r10#3".to_string())]
    );
    assert!(journal.find_all("report", "r3").unwrap().is_empty());
    assert!(journal.find_all("other", "r1").unwrap().is_empty());
    assert_eq!(
        seqs(journal.range_in("report", "r1", 1, 10).unwrap()),
        vec![2, 4]
    );
    assert_eq!(
        seqs(journal.range_in("report", "r1", 0, 2).unwrap()),
        vec![0, 2]
    );
    assert_eq!(
        journal.find("key", "r1#2").unwrap(),
        Some((2, "r1#2".into()))
    );
    assert_eq!(journal.next_seq().unwrap(), 5);
}

#[test]
fn settled_records_leave_their_group_and_join_the_feed_in_order() {
    let dir = tempfile::tempdir().unwrap();
    {
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        for name in ["a", "b", "c"] {
            journal
                .append_grouped(&name.to_string(), &[], &[("open", "")])
                .unwrap();
        }
        journal
            .settle(
                &[(2, "c!".to_string()), (0, "a!".to_string())],
                &[("open", "")],
            )
            .unwrap();
        journal.settle(&[], &[("open", "")]).unwrap();
    }
    // Reopened: the feed, the group and the new states are durable.
    let journal = reopen(dir.path());
    assert_eq!(
        journal.feed(0, 10).unwrap(),
        vec![(0, 2, "c!".to_string()), (1, 0, "a!".to_string())]
    );
    assert_eq!(journal.feed(1, 10).unwrap().len(), 1);
    assert!(journal.feed(2, 10).unwrap().is_empty());
    assert_eq!(journal.next_feed_position().unwrap(), 2);
    assert_eq!(
        journal.find_all("open", "").unwrap(),
        vec![(1, "b".to_string())]
    );
    journal
        .settle(&[(1, "b!".to_string())], &[("open", "")])
        .unwrap();
    assert_eq!(journal.feed(2, 10).unwrap(), vec![(2, 1, "b!".to_string())]);
    assert!(journal.find_all("open", "").unwrap().is_empty());
}

#[test]
fn partition_point_finds_the_first_record_past_a_monotone_predicate() {
    let dir = tempfile::tempdir().unwrap();
    let journal: Journal<u32> = Journal::open(dir.path(), "j").unwrap();
    assert_eq!(journal.partition_point(|_| true).unwrap(), 0);
    for value in [10, 20, 20, 30, 40] {
        journal.append(&value, &[]).unwrap();
    }
    assert_eq!(journal.partition_point(|v| *v < 20).unwrap(), 1);
    assert_eq!(journal.partition_point(|v| *v < 25).unwrap(), 3);
    assert_eq!(journal.partition_point(|v| *v < 5).unwrap(), 0);
    assert_eq!(journal.partition_point(|v| *v < 50).unwrap(), 5);
}

#[test]
fn partition_point_steps_over_numbers_without_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let journal: Journal<u32> = Journal::open(dir.path(), "j").unwrap();
    // A refused append leaves its number without a record: here #1 and #4.
    for (value, key) in [
        (10, "a"),
        (99, "a"),
        (20, "b"),
        (30, "c"),
        (99, "c"),
        (40, "d"),
    ] {
        let _ = journal.append(&value, &[("key", key)]);
    }
    let seqs: Vec<u64> = journal
        .range(0, 10)
        .unwrap()
        .iter()
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(seqs, [0, 2, 3, 5]);
    for (below, first_not) in [(5, 0), (15, 1), (25, 3), (35, 4), (45, 6)] {
        let at = journal.partition_point(|v| *v < below).unwrap();
        // Reading on from the result starts at the first record that is not below.
        let read = journal.range(at, 1).unwrap().first().map(|(seq, _)| *seq);
        let expected = journal
            .range(first_not, 1)
            .unwrap()
            .first()
            .map(|(seq, _)| *seq);
        assert_eq!(read, expected, "below {below}: partition point {at}");
    }
}

#[test]
fn a_second_open_of_the_same_directory_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let _first: Journal<String> = Journal::open(dir.path(), "j").unwrap();
    let second = Journal::<String>::open(dir.path(), "j");
    assert!(
        matches!(second, Err(JournalError::Locked(_))),
        "{:?}",
        second.err()
    );
}
