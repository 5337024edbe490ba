//! A corpus of secrets for the redaction tests: every token format Warden
//! redacts, placed everywhere a secret turns up in text (alone, first, in the
//! middle, last, joined to a word by `_`, `-`, `=` or `:`, quoted, in a URL),
//! and the password arguments of database and SSH clients. The secrets are made
//! up, in the real formats.

/// A token of a known format.
#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub format: &'static str,
    pub value: &'static str,
}

/// One token of every format the built-in patterns know.
pub const TOKENS: &[Token] = &[
    Token {
        format: "GitHub classic",
        value: "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    },
    Token {
        format: "GitHub fine-grained",
        value: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    },
    Token {
        format: "AWS access key id",
        value: "AKIAIOSFODNN7EXAMPLE",
    },
    Token {
        format: "Slack",
        value: "xoxb-2048-4096-Zq8mWc3TnP0sLkR7",
    },
    Token {
        format: "sk- key",
        value: "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx",
    },
    Token {
        format: "JWT",
        value: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVlLTAx",
    },
    Token {
        format: "Google API key",
        value: "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    },
];

/// Where a token is put: a name for messages, and a template whose `{}` is
/// the token. Every template but `alone` has [`KEPT`] around the token, which
/// must survive redaction.
pub const PLACEMENTS: &[(&str, &str)] = &[
    ("alone", "{}"),
    ("at the start", "{} keepme"),
    ("in the middle", "keepme {} keepme"),
    ("at the end", "keepme {}"),
    ("joined by _", "keepme x_{} keepme"),
    ("joined to a word by _", "keepme key_{}"),
    ("joined by -", "keepme x-{}"),
    ("joined by =", "keepme x={}"),
    ("joined by :", "keepme x:{}"),
    ("single-quoted", "keepme '{}'"),
    ("double-quoted", "keepme \"{}\""),
    ("in a URL path", "keepme https://api.example.com/{}/keepme"),
    ("followed by _", "keepme {}_keepme"),
];

/// The word every placement keeps.
pub const KEPT: &str = "keepme";

/// A token placed: where, and the text.
pub fn placed(token: &Token, placement: &(&str, &str)) -> String {
    placement.1.replace("{}", token.value)
}

/// A command that passes a password to a client, the password, and a part of
/// the command that must survive redaction.
#[derive(Clone, Copy, Debug)]
pub struct ClientPassword {
    pub command: &'static str,
    pub secret: &'static str,
    pub kept: &'static str,
}

/// Client passwords with no space in them: they stay one word however a
/// provider re-quotes the command in its reason.
pub const CLIENT_PASSWORDS: &[ClientPassword] = &[
    ClientPassword {
        command: "mysql -uroot -pHunter2Mysql shop",
        secret: "Hunter2Mysql",
        kept: "mysql -uroot -p",
    },
    ClientPassword {
        command: "mysql --password=Hunter2MysqlEq -h db shop",
        secret: "Hunter2MysqlEq",
        kept: "-h db shop",
    },
    ClientPassword {
        command: "mariadb -h db --password Hunter2Maria shop",
        secret: "Hunter2Maria",
        kept: "mariadb -h db --password",
    },
    ClientPassword {
        command: "mysqldump -u root -pHunter2Dump shop",
        secret: "Hunter2Dump",
        kept: "mysqldump -u root",
    },
    ClientPassword {
        command: "PGPASSWORD=Hunter2Pg psql -h db shop",
        secret: "Hunter2Pg",
        kept: "psql -h db shop",
    },
    ClientPassword {
        command: "psql postgresql://app:Hunter2PgUrl@db/shop",
        secret: "Hunter2PgUrl",
        kept: "@db/shop",
    },
    ClientPassword {
        command: "MYSQL_PWD=Hunter2Env mysql shop",
        secret: "Hunter2Env",
        kept: "mysql shop",
    },
    ClientPassword {
        command: "mongosh -u admin -p Hunter2Mongo --host db",
        secret: "Hunter2Mongo",
        kept: "--host db",
    },
    ClientPassword {
        command: "mongodump --password=Hunter2MongoEq --db shop",
        secret: "Hunter2MongoEq",
        kept: "--db shop",
    },
    ClientPassword {
        command: "redis-cli -h cache -p 6379 -a Hunter2Redis ping",
        secret: "Hunter2Redis",
        kept: "-p 6379",
    },
    ClientPassword {
        command: "redis-cli --pass Hunter2RedisPass ping",
        secret: "Hunter2RedisPass",
        kept: "ping",
    },
    ClientPassword {
        command: "sshpass -p Hunter2Ssh ssh deploy@host",
        secret: "Hunter2Ssh",
        kept: "ssh deploy@host",
    },
    ClientPassword {
        command: "sshpass -pHunter2SshJoined scp a host:b",
        secret: "Hunter2SshJoined",
        kept: "scp a host:b",
    },
];

/// Client passwords that hold a space, quoted on the command line.
pub const QUOTED_CLIENT_PASSWORDS: &[ClientPassword] = &[
    ClientPassword {
        command: "mysqldump -u root -p'Hunter2 Dump' shop",
        secret: "Hunter2 Dump",
        kept: "shop",
    },
    ClientPassword {
        command: "PGPASSWORD='Hunter2 Pg' psql shop",
        secret: "Hunter2 Pg",
        kept: "psql shop",
    },
    ClientPassword {
        command: "sshpass -p \"Hunter2 Ssh\" ssh host",
        secret: "Hunter2 Ssh",
        kept: "ssh host",
    },
];

/// Text that looks a little like a secret and is not one: kept as it is.
pub const NOT_SECRETS: &[&str] = &[
    "redis-cli -p 6379 ping",
    "mysql -P3306 -h db -p shop",
    "docker login --password-stdin -u bob registry.example.com",
    "risk-assessment-for-the-whole-team-2026",
    "task-0123456789abcdefghijklmnop",
    "git status && cargo test -p warden-policy",
];
