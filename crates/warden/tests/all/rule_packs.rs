//! The remote-state rule packs under `examples/rule-packs/`: each loads as a
//! `builtin:rules` provider's `rules` through `config_files`, asks (or denies)
//! the commands it names and allows the everyday forms of the same programs.

use crate::common::*;
use serde_json::json;
use warden::{Caller, Config, ToolCall, Verdict, Warden};

const PACKS: [&str; 6] = [
    "infrastructure",
    "kubernetes",
    "cloud",
    "databases",
    "containers",
    "git",
];

fn packs_dir() -> std::path::PathBuf {
    repo_root().join("examples/rule-packs")
}

/// Warden with one pack as its only provider, added the way the README says.
fn pack(name: &str) -> Warden {
    let text = format!(
        "permissions:\n  mode: full_auto\nguardrails:\n  providers:\n    - name: {name}\n      wasm: builtin:rules\n      config: {{policy_id: {name}, default: allow}}\n      config_files: {{rules: {name}.yaml}}\n"
    );
    let config = Config::parse(&text, "<pack test>", packs_dir()).unwrap();
    Warden::new(&config).unwrap()
}

/// The pack's own verdict on a shell command, whatever the native stage adds.
fn said(w: &Warden, name: &str, command: &str) -> Verdict {
    let call = ToolCall::new("bash", cmd(command));
    let e = w.evaluate(&call, Caller::Agent).unwrap();
    let stage = format!("provider:{name}");
    e.stages
        .iter()
        .find(|s| s.stage == stage)
        .unwrap_or_else(|| panic!("{stage} was not asked about `{command}`: {e:?}"))
        .verdict
}

/// What each pack says, by pack; the everyday forms of the same programs last.
const EXPECTED: &[(&str, Verdict, &str)] = &[
    ("infrastructure", Verdict::Ask, "terraform destroy"),
    (
        "infrastructure",
        Verdict::Ask,
        "terraform -chdir=infra destroy -auto-approve",
    ),
    (
        "infrastructure",
        Verdict::Ask,
        "cd infra && tofu apply -destroy -auto-approve",
    ),
    (
        "infrastructure",
        Verdict::Ask,
        "terraform state rm aws_db_instance.main",
    ),
    ("infrastructure", Verdict::Ask, "terragrunt run-all destroy"),
    ("infrastructure", Verdict::Ask, "pulumi destroy --yes"),
    (
        "infrastructure",
        Verdict::Ask,
        "pulumi stack rm prod --force",
    ),
    ("infrastructure", Verdict::Ask, "npx cdk destroy --force"),
    (
        "infrastructure",
        Verdict::Allow,
        "terraform plan -out plan.tfplan",
    ),
    (
        "infrastructure",
        Verdict::Allow,
        "terraform apply plan.tfplan",
    ),
    (
        "infrastructure",
        Verdict::Allow,
        "terraform init && terraform fmt -recursive",
    ),
    ("infrastructure", Verdict::Allow, "pulumi preview"),
    ("kubernetes", Verdict::Ask, "kubectl delete pods --all"),
    (
        "kubernetes",
        Verdict::Ask,
        "kubectl delete deploy --all -n prod",
    ),
    (
        "kubernetes",
        Verdict::Ask,
        "kubectl delete pods -A --field-selector status.phase=Running",
    ),
    ("kubernetes", Verdict::Ask, "kubectl delete pods -l app=web"),
    ("kubernetes", Verdict::Ask, "kubectl delete namespace prod"),
    (
        "kubernetes",
        Verdict::Ask,
        "kubectl --context prod delete ns staging",
    ),
    ("kubernetes", Verdict::Ask, "kubectl delete pv data-0"),
    (
        "kubernetes",
        Verdict::Ask,
        "kubectl drain node-1 --ignore-daemonsets",
    ),
    ("kubernetes", Verdict::Ask, "helm uninstall web -n prod"),
    ("kubernetes", Verdict::Allow, "kubectl get pods -A"),
    (
        "kubernetes",
        Verdict::Allow,
        "kubectl delete pod web-5d9c7-x2x7q",
    ),
    ("kubernetes", Verdict::Allow, "kubectl apply -f deploy.yaml"),
    ("kubernetes", Verdict::Allow, "helm list -A"),
    ("cloud", Verdict::Ask, "aws s3 rm s3://bucket --recursive"),
    (
        "cloud",
        Verdict::Ask,
        "aws --profile prod s3 rm s3://bucket/logs/ --recursive --quiet",
    ),
    ("cloud", Verdict::Ask, "aws s3 rb s3://bucket --force"),
    (
        "cloud",
        Verdict::Ask,
        "aws s3 sync ./empty s3://bucket --delete",
    ),
    ("cloud", Verdict::Ask, "aws s3api delete-bucket --bucket b"),
    ("cloud", Verdict::Ask, "gsutil -m rm -r gs://bucket"),
    (
        "cloud",
        Verdict::Ask,
        "gcloud storage rm --recursive gs://bucket/**",
    ),
    (
        "cloud",
        Verdict::Ask,
        "az storage blob delete-batch -s data --account-name acct",
    ),
    (
        "cloud",
        Verdict::Ask,
        "aws ec2 terminate-instances --instance-ids i-0abc",
    ),
    (
        "cloud",
        Verdict::Ask,
        "aws rds delete-db-instance --db-instance-identifier prod --skip-final-snapshot",
    ),
    ("cloud", Verdict::Ask, "gcloud projects delete my-project"),
    ("cloud", Verdict::Ask, "az group delete -n prod-rg --yes"),
    ("cloud", Verdict::Allow, "aws s3 ls s3://bucket"),
    (
        "cloud",
        Verdict::Allow,
        "aws s3 cp build.zip s3://bucket/releases/",
    ),
    ("cloud", Verdict::Allow, "aws s3 rm s3://bucket/tmp/one.txt"),
    ("cloud", Verdict::Allow, "aws s3 sync ./site s3://bucket"),
    ("cloud", Verdict::Allow, "gsutil ls gs://bucket"),
    ("cloud", Verdict::Allow, "aws ec2 describe-instances"),
    ("databases", Verdict::Ask, "dropdb prod"),
    (
        "databases",
        Verdict::Ask,
        "sudo -u postgres dropdb --if-exists app",
    ),
    ("databases", Verdict::Ask, "mysqladmin -u root drop app"),
    ("databases", Verdict::Ask, "psql -c 'DROP DATABASE app'"),
    (
        "databases",
        Verdict::Ask,
        "mysql -e 'drop table users;' app",
    ),
    ("databases", Verdict::Ask, "psql app -c 'TRUNCATE orders'"),
    (
        "databases",
        Verdict::Ask,
        "psql app -c 'DELETE FROM users;'",
    ),
    ("databases", Verdict::Ask, "redis-cli -h cache FLUSHALL"),
    (
        "databases",
        Verdict::Ask,
        "mongosh app --eval 'db.dropDatabase()'",
    ),
    (
        "databases",
        Verdict::Allow,
        "psql app -c 'select count(*) from users'",
    ),
    (
        "databases",
        Verdict::Allow,
        "psql app -c \"DELETE FROM sessions WHERE expires < now()\"",
    ),
    ("databases", Verdict::Allow, "pg_dump app > app.sql"),
    ("databases", Verdict::Allow, "createdb app_test"),
    ("databases", Verdict::Allow, "redis-cli GET key"),
    (
        "containers",
        Verdict::Ask,
        "docker system prune -a --volumes",
    ),
    ("containers", Verdict::Ask, "docker system prune -af"),
    ("containers", Verdict::Ask, "docker system prune -fa"),
    ("containers", Verdict::Ask, "docker compose down -vt 5"),
    (
        "containers",
        Verdict::Ask,
        "docker system prune --volumes -f",
    ),
    ("containers", Verdict::Ask, "docker volume prune -f"),
    ("containers", Verdict::Ask, "docker volume rm pgdata"),
    ("containers", Verdict::Ask, "podman system prune --all"),
    ("containers", Verdict::Ask, "docker compose down -v"),
    (
        "containers",
        Verdict::Ask,
        "docker-compose down --volumes --rmi all",
    ),
    ("containers", Verdict::Allow, "docker ps -a"),
    ("containers", Verdict::Allow, "docker build -t app ."),
    ("containers", Verdict::Allow, "docker system prune -f"),
    ("containers", Verdict::Allow, "docker compose down"),
    ("containers", Verdict::Allow, "docker volume ls"),
    ("git", Verdict::Deny, "git push --force origin main"),
    ("git", Verdict::Deny, "git push origin main -f"),
    ("git", Verdict::Deny, "git push origin +master"),
    (
        "git",
        Verdict::Deny,
        "git -C repo push --force-with-lease origin main",
    ),
    ("git", Verdict::Ask, "git push --force origin feature"),
    ("git", Verdict::Ask, "git push -uf origin feature"),
    ("git", Verdict::Ask, "git push origin +feature"),
    ("git", Verdict::Ask, "git push origin --delete feature"),
    ("git", Verdict::Ask, "git push origin :feature"),
    ("git", Verdict::Ask, "git push --mirror backup"),
    ("git", Verdict::Allow, "git push"),
    ("git", Verdict::Allow, "git push -u origin feature"),
    ("git", Verdict::Allow, "git push origin main --follow-tags"),
    (
        "git",
        Verdict::Ask,
        "git push --force-with-lease=main-backup origin backup",
    ),
    ("git", Verdict::Ask, "git push -fu origin feature"),
    ("git", Verdict::Allow, "git push origin main-fix --dry-run"),
];

#[test]
fn every_pack_is_tested_and_every_file_of_the_folder_is_a_pack() {
    let mut files: Vec<String> = std::fs::read_dir(packs_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".yaml") && f != "warden.yaml")
        .collect();
    files.sort();
    let mut named: Vec<String> = PACKS.iter().map(|p| format!("{p}.yaml")).collect();
    named.sort();
    assert_eq!(files, named);
    for name in PACKS {
        for verdict in [Verdict::Allow, Verdict::Ask] {
            assert!(
                EXPECTED.iter().any(|(p, v, _)| *p == name && *v == verdict),
                "the {name} pack has no {} example",
                verdict.as_str()
            );
        }
    }
}

#[test]
fn each_pack_asks_or_denies_what_it_names_and_allows_the_everyday_forms() {
    let mut wrong = Vec::new();
    for name in PACKS {
        let w = pack(name);
        for (_, want, command) in EXPECTED.iter().filter(|(p, ..)| *p == name) {
            let got = said(&w, name, command);
            if got != *want {
                wrong.push(format!(
                    "{name}: {} for `{command}`, want {}",
                    got.as_str(),
                    want.as_str()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_packs_name_the_rule_that_asked() {
    let w = pack("cloud");
    let call = ToolCall::new("bash", cmd("aws s3 rm s3://b --recursive"));
    let e = w.evaluate(&call, Caller::Agent).unwrap();
    let stage = e
        .stages
        .iter()
        .find(|s| s.stage == "provider:cloud")
        .unwrap();
    assert_eq!(stage.codes, ["remote_state.storage_purge"], "{e:?}");
}

#[test]
fn the_example_adding_every_pack_loads_and_its_asks_stand_under_an_allow_all_rule() {
    let path = packs_dir().join("warden.yaml");
    let mut config = Config::load(&path).unwrap();
    let w = Warden::new(&config).unwrap();
    let verdict = |w: &Warden, command: &str| {
        let call = ToolCall::new("bash", cmd(command));
        w.evaluate(&call, Caller::Agent).unwrap().verdict
    };
    assert_eq!(verdict(&w, "terraform destroy -auto-approve"), Verdict::Ask);
    assert_eq!(verdict(&w, "git push -f origin main"), Verdict::Deny);
    assert_eq!(
        verdict(&w, "kubectl get pods && git status"),
        Verdict::Allow
    );
    // A permission rule allowing every command does not stand a provider's ask aside.
    config.permissions.as_mut().unwrap().allow = vec!["Bash(*)".into()];
    let w = Warden::new(&config).unwrap();
    assert_eq!(verdict(&w, "dropdb prod"), Verdict::Ask);
    // A tool without a command is not the packs' business.
    let call = ToolCall::new("write_file", json!({"path": "main.tf", "content": "x"}));
    assert_eq!(
        w.evaluate(&call, Caller::Agent).unwrap().verdict,
        Verdict::Allow
    );
}
