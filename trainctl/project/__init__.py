"""The project's own files, read and written without deploying anything: every spec checked (`validate`) and one
run's request shown (`render`, specs.py), the synthesized assembly summarized for a pull request (`summary`, with the
schedules and budget of schedule_report.py), and the two files trainctl writes from AWS for synth to read offline:
an account's Availability Zones (`lookup-zones`, zones.py) and a region's list prices (`prices`, prices.py), each
replaced in one step (files.py)."""
