"""Customer managed KMS keys, as a spec (`output_kms_key`, `volume_kms_key`, `secrets_kms_key`) and cdk.json
(`kms_keys`) name them: by the key's ARN, so that a role can be allowed exactly that key and the environment can say
which workloads may use it."""

from __future__ import annotations

import re

# arn:<partition>:kms:<region>:<account>:key/<key id>: a key id is a UUID, or mrk-<32 hex> for a multi-Region key.
KEY_ARN = re.compile(r"arn:aws[a-z-]*:kms:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):key/(?:[0-9a-f-]{36}|mrk-[0-9a-f]{32})")
