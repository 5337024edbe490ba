//! Announcements between daemons sharing a PostgreSQL store, on the test
//! PostgreSQL: what one store says, every listener on the database hears, in
//! order; a listener that lost the database says so once it is back.

use std::sync::mpsc;
use std::time::Duration;

use warden_approval::announce::{Heard, Listening};
use warden_approval::postgres::{PoolOptions, PostgresApprovalStore};
use warden_approval::store::ApprovalStore;
use warden_testkit::postgres::PgServer;

fn store(url: &str) -> PostgresApprovalStore {
    PostgresApprovalStore::connect(url, PoolOptions::default()).unwrap()
}

fn listen(store: &PostgresApprovalStore) -> (Listening, mpsc::Receiver<Heard>) {
    let (sender, heard) = mpsc::channel();
    let listening = store
        .announcer()
        .expect("a PostgreSQL store announces")
        .listen(Box::new(move |h| {
            let _ = sender.send(h);
        }))
        .unwrap();
    (listening, heard)
}

const WITHIN: Duration = Duration::from_secs(10);

#[test]
fn what_one_store_announces_every_listener_on_the_database_hears_in_order() {
    let url = PgServer::shared().database();
    let (a, b) = (store(&url), store(&url));
    let (_listening, heard) = listen(&b);
    let announcer = a.announcer().unwrap();
    announcer.announce("first").unwrap();
    announcer.announce("second").unwrap();
    assert_eq!(
        heard.recv_timeout(WITHIN),
        Ok(Heard::Message("first".into()))
    );
    assert_eq!(
        heard.recv_timeout(WITHIN),
        Ok(Heard::Message("second".into()))
    );
}

#[test]
fn a_listener_on_another_database_hears_nothing() {
    let server = PgServer::shared();
    let (a, b) = (store(&server.database()), store(&server.database()));
    let (_listening, heard) = listen(&b);
    a.announcer().unwrap().announce("elsewhere").unwrap();
    assert!(heard.recv_timeout(Duration::from_millis(500)).is_err());
}

#[test]
fn a_listener_that_lost_the_database_hears_a_gap_and_then_listens_again() {
    let server = PgServer::start().unwrap();
    let url = server.database();
    let (a, b) = (store(&url), store(&url));
    let (_listening, heard) = listen(&b);
    a.announcer().unwrap().announce("before").unwrap();
    assert_eq!(
        heard.recv_timeout(WITHIN),
        Ok(Heard::Message("before".into()))
    );
    server.restart().unwrap();
    assert_eq!(heard.recv_timeout(WITHIN), Ok(Heard::Gap));
    // The pool's connection from before the restart is found dead on use,
    // and the message goes on a fresh one.
    a.announcer().unwrap().announce("after").unwrap();
    assert_eq!(
        heard.recv_timeout(WITHIN),
        Ok(Heard::Message("after".into()))
    );
}

#[test]
fn a_dropped_listener_stops_hearing() {
    let url = PgServer::shared().database();
    let a = store(&url);
    let (listening, heard) = listen(&a);
    drop(listening);
    std::thread::sleep(Duration::from_millis(500));
    a.announcer().unwrap().announce("gone").unwrap();
    // The thread has ended, and with it the only sender.
    assert_eq!(
        heard.recv_timeout(WITHIN),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
}
