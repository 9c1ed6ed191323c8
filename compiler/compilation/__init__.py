"""From the typed model to what is deployed and run: distribution strategies, images, the CreateTrainingJob request,
run overrides, costs and schedules, secrets, the network's address budget, the stack layout, and a workload's
description for reviewers."""
