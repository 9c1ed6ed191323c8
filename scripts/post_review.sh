#!/usr/bin/env bash
# Post the review report on the pull request, or update the comment an earlier run posted (found by its marker),
# so a pull request carries one review comment that always describes its latest push. Uses the gh CLI and GH_TOKEN.
# Usage: scripts/post_review.sh REPORT.md PULL_REQUEST_NUMBER
#
# GitHub refuses a comment body over 65,536 characters (the REST API's 422, "Body is too long (maximum is 65536
# characters)"). The report given should already fit (`trainctl review --comment`); whatever it is, this script cuts
# it at a line to fit, counting bytes (never fewer than characters), and links the workflow run, whose job summary
# holds the full report.
set -euo pipefail
report=$1
pull_request=$2
limit=${REVIEW_COMMENT_LIMIT:-65536}
marker="<!-- trainctl review -->"
footer=""
if [ -n "${GITHUB_RUN_ID:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ]; then
  footer="The full report is in the job summary of [this workflow run](${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY}/actions/runs/${GITHUB_RUN_ID})."
fi
text="$(cat "$report")"
tail_line="$footer"
if [ -n "$footer" ] && grep -qF "/actions/runs/${GITHUB_RUN_ID}" "$report"; then
  tail_line=""  # the report links the run already (trainctl review --full-report-url)
fi
body="$(printf '%s\n\n%s\n\n%s' "$marker" "$text" "$tail_line")"
if [ "$(printf '%s' "$body" | wc -c)" -gt "$limit" ]; then
  notice="**The review is cut here to fit GitHub's comment limit.** ${footer}"
  room=$(( limit - $(printf '%s\n\n\n\n%s' "$marker" "$notice" | wc -c) - 1 ))
  text="$(head -c "$room" "$report" | sed '$d')"  # whole lines only (a cut line or character is dropped)
  body="$(printf '%s\n\n%s\n\n%s' "$marker" "$text" "$notice")"
fi
existing=$(gh api "repos/{owner}/{repo}/issues/${pull_request}/comments" --paginate \
  --jq ".[] | select(.body | startswith(\"${marker}\")) | .id" | head -n 1)
if [ -n "$existing" ]; then
  gh api --method PATCH "repos/{owner}/{repo}/issues/comments/${existing}" -f body="$body" > /dev/null
  echo "updated review comment ${existing} ($(printf '%s' "$body" | wc -c) bytes)"
else
  gh api --method POST "repos/{owner}/{repo}/issues/${pull_request}/comments" -f body="$body" > /dev/null
  echo "posted the review comment ($(printf '%s' "$body" | wc -c) bytes)"
fi
