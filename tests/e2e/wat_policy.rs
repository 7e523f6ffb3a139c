//! WAT policies (built by [`crate::common::wat`]) through the real sandbox:
//! one plain instance passes the self-check.

use crate::common::wat::{Spec, policy};

#[test]
fn a_plain_wat_policy_passes_the_check() {
    let engine =
        signpost::policy::PolicyEngine::new(signpost::policy::Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    let policy = engine.load(&policy(&Spec::default()), "wat").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(policy.identity().name, "wat");
    let validator = signpost::validate::HintValidator::new().unwrap_or_else(|e| panic!("{e}"));
    signpost::selfcheck::run(&policy, &validator, std::time::Duration::from_millis(100), None, &|| false)
        .unwrap_or_else(|e| panic!("{e}"));
}
