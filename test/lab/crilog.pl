#!/usr/bin/env perl
# crilog.pl IN OUT follows IN (a controller's log as it writes it) and appends
# each line to OUT in the container runtime's log format
# ("2026-01-02T03:04:05.123456789Z stderr F line"), the format a kubelet
# serves pods/log from. kwok's Logs object points the controller
# Deployment's pod at OUT, so `kubectl logs` returns the controller's log
# through the API server. The timestamp is when the line was read (at most
# 0.2 s after the controller wrote it), which sinceTime/sinceSeconds use.
use strict;
use warnings;
use Time::HiRes qw(time sleep);
use POSIX qw(strftime);
use IO::Handle;

my ($inPath, $outPath) = @ARGV;
die "usage: crilog.pl IN OUT\n" unless defined $outPath;
my $in;
until (open($in, '<', $inPath)) { sleep 0.1 }
open(my $out, '>>', $outPath) or die "$outPath: $!\n";
$out->autoflush(1);
my $buf = '';
while (1) {
	my $n = sysread($in, my $chunk, 65536);
	if (!defined $n) { die "$inPath: $!\n" }
	if ($n == 0) { sleep 0.2; next }
	$buf .= $chunk;
	while ($buf =~ s/^([^\n]*)\n//) {
		my $t = time;
		my $s = int $t;
		printf $out "%s.%09dZ stderr F %s\n", strftime('%Y-%m-%dT%H:%M:%S', gmtime $s), ($t - $s) * 1e9, $1;
	}
}
