#!/bin/sh
# Reproduces the simulator results in the README: for each reference trace,
# tune inferscale, HPA (queue), KEDA (queue) and Knative KPA for the fewest
# GPU-hours at 99% TTFT attainment (2 s SLO, 60 s cold start), then compare
# them tuned and with their defaults, the cheapest static fleet and the
# oracle. Prints Markdown. Usage: sh sim/results.sh [SHARED_DIR] > out.md
set -eu
SHARED=${1:-../shared}
SIM=${SIM:-bin/simulate}
T=$SHARED/traces
COMMON="-startup 60 -slo 2 -target 0.99 -quiet"

run_trace() {
	label=$1
	shift
	echo "#### $label"
	echo
	tuned=""
	for p in inferscale hpa-queue keda-queue kpa; do
		spec=$($SIM tune $COMMON -policy $p -grid 5 -passes 2 "$@" 2>/dev/null | sed -n "s/^use it with: simulate run -policies '\(.*\)'$/\1/p")
		tuned="$tuned;$spec"
	done
	echo '```'
	echo "bin/simulate run $COMMON $* -markdown -policies 'inferscale;hpa-queue;keda-queue;kpa$tuned;static'"
	echo '```'
	echo
	$SIM run $COMMON "$@" -markdown -policies "inferscale;hpa-queue;keda-queue;kpa$tuned;static" 2>/dev/null
	echo
}

run_trace "Azure LLM 2023 code (8,819 requests, 57 min, as recorded)" -trace "$T/azure_llm_2023/AzureLLMInferenceTrace_code.csv"
run_trace "Mooncake conversation (12,031 requests, 59 min, as recorded)" -trace "$T/mooncake_fast25/conversation_trace.jsonl"
run_trace "ServeGen m-large, day 2 (24 h), every client at 5% of the rate" -trace "$T/servegen/servegen_trace_csvs_m-large.tar.gz" -start 24h -duration 24h -rate 0.05
