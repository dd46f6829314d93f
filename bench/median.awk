# median(s): the median of the numbers in s, separated by spaces (the mean
# of the middle two for an even count). Shared by the GPU machine's summary
# scripts (bench/gpu-ab-summary.sh, gpu-ab-wait.sh, gpu-peers-go.sh), which
# put it in front of their programs: awk "$(cat bench/median.awk)"'...'.
function median(s,   n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
