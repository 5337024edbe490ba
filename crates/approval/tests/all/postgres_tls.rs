//! TLS to PostgreSQL as `sslmode` says, against the test PostgreSQL (which
//! offers TLS with a certificate for the name `warden-test-db`, signed by the
//! fixtures' `ca.pem`): each mode connects or is refused as libpq's would,
//! and the database sees the store's connections encrypted or not.

use std::time::Duration;

use warden_approval::ListFilter;
use warden_approval::postgres::{PoolOptions, PostgresApprovalStore};
use warden_approval::postgres_tls::SslMode;
use warden_approval::store::{ApprovalStore, StoreError};
use warden_testkit::postgres::{PgServer, tls_fixture};

/// A fresh database's URL with `settings` instead of `sslmode=disable`.
fn url_with(settings: &str) -> (String, String) {
    let url = PgServer::shared().database();
    let name = url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    (url.replace("sslmode=disable", settings), name)
}

fn connect(url: &str) -> Result<PostgresApprovalStore, StoreError> {
    let options = PoolOptions {
        timeout: Duration::from_millis(500),
        ..PoolOptions::default()
    };
    PostgresApprovalStore::connect(url, options)
}

/// Whether the store's connections to database `name` are encrypted, as the
/// server sees them (after a read, which leaves one in its pool).
fn encrypted(store: &PostgresApprovalStore, name: &str) -> bool {
    store.list(&ListFilter::default()).unwrap();
    let mut admin =
        postgres::Client::connect(&PgServer::shared().url("postgres"), postgres::NoTls).unwrap();
    let row = admin
        .query_one(
            "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.datname = $1",
            &[&name],
        )
        .unwrap();
    row.get::<_, Option<bool>>(0)
        .expect("the store holds a connection")
}

fn ca(name: &str) -> String {
    format!("sslrootcert={}", tls_fixture(name).display())
}

#[test]
fn require_encrypts_the_connections() {
    let (url, name) = url_with("sslmode=require");
    let store = connect(&url).unwrap();
    assert_eq!(store.ssl_mode(), SslMode::Require);
    assert!(encrypted(&store, &name));
}

#[test]
fn prefer_the_default_encrypts_where_the_server_offers_it() {
    let (url, name) = url_with("application_name=warden-test");
    let store = connect(&url).unwrap();
    assert_eq!(store.ssl_mode(), SslMode::Prefer);
    assert!(encrypted(&store, &name));
}

#[test]
fn disable_connects_in_the_clear() {
    let (url, name) = url_with("sslmode=disable");
    let store = connect(&url).unwrap();
    assert!(!encrypted(&store, &name));
}

#[test]
fn verify_full_connects_to_the_name_the_authority_vouched_for() {
    let (url, name) = url_with(&format!("sslmode=verify-full&{}", ca("ca.pem")));
    // The certificate names warden-test-db; the server is on 127.0.0.1.
    let url = url.replace("@127.0.0.1:", "@warden-test-db:") + "&hostaddr=127.0.0.1";
    let store = connect(&url).unwrap();
    assert!(encrypted(&store, &name));
}

#[test]
fn verify_full_refuses_a_certificate_that_names_another_host() {
    let (url, _) = url_with(&format!("sslmode=verify-full&{}", ca("ca.pem")));
    let err = connect(&url).err().expect("refused").to_string();
    assert!(
        err.contains("certificate not valid for name \"127.0.0.1\""),
        "{err}"
    );
}

#[test]
fn verify_ca_accepts_the_authority_whatever_the_name() {
    let (url, name) = url_with(&format!("sslmode=verify-ca&{}", ca("ca.pem")));
    let store = connect(&url).unwrap();
    assert!(encrypted(&store, &name));
}

#[test]
fn verify_ca_refuses_a_certificate_of_another_authority() {
    let (url, _) = url_with(&format!("sslmode=verify-ca&{}", ca("other-ca.pem")));
    let err = connect(&url).err().expect("refused").to_string();
    assert!(err.contains("UnknownIssuer"), "{err}");
}

#[test]
fn a_verifying_mode_without_an_authority_is_refused_before_connecting() {
    let (url, _) = url_with("sslmode=verify-full");
    let err = connect(&url).err().expect("refused").to_string();
    assert!(err.contains("sslrootcert"), "{err}");
}
