//! End-to-end tests: the real `peat` binary on real files in temporary directories.
//! HOME, the transcript roots and the store always point inside the test's own folder.

mod agents;
mod agents_documents;
mod agents_jsonl;
mod agents_sqlite;
mod blame;
mod blame_history;
mod brief;
mod budget;
mod capture;
mod commits;
mod diff;
mod dispatch;
mod export;
mod faults;
mod honest;
mod hook;
mod hook_agents;
mod jj;
mod kill;
mod log;
mod mcp;
mod obs;
mod paths;
mod props;
mod ran;
mod readers;
mod reading;
mod recall;
mod redact;
mod resident;
mod restore;
mod resume;
mod scope;
mod support;
mod trace;
mod width;
mod words;

#[test]
fn no_test_file_is_forgotten() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            assert!(
                main.contains(&format!("mod {module};")),
                "tests/cli/{name} is not declared in main.rs"
            );
        }
    }
}
