#!/usr/bin/env bash
# Post the review report on the pull request, or update the comment an earlier run posted (found by its marker),
# so a pull request carries one review comment that always describes its latest push. Uses the gh CLI and GH_TOKEN.
# Usage: scripts/post_review.sh REPORT.md PULL_REQUEST_NUMBER
set -euo pipefail
report=$1
pull_request=$2
marker="<!-- trainctl review -->"
body="$(printf '%s\n\n%s' "$marker" "$(cat "$report")")"
existing=$(gh api "repos/{owner}/{repo}/issues/${pull_request}/comments" --paginate \
  --jq ".[] | select(.body | startswith(\"${marker}\")) | .id" | head -n 1)
if [ -n "$existing" ]; then
  gh api --method PATCH "repos/{owner}/{repo}/issues/comments/${existing}" -f body="$body" > /dev/null
  echo "updated review comment ${existing}"
else
  gh api --method POST "repos/{owner}/{repo}/issues/${pull_request}/comments" -f body="$body" > /dev/null
  echo "posted the review comment"
fi
