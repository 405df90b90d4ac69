# SPDX-License-Identifier: GPL-2.0-or-later
# memgate - plain Makefile. `make` builds build/memgate, `make check` runs the tests,
# `make run` runs the main job. WERROR=1 (as CI sets it) turns warnings into errors.

PKGS      := hwloc libcpuid libxml-2.0 jansson libconfig
TEST_PKGS := cmocka

CC       ?= gcc
CFLAGS   ?= -O2 -g
# What the code needs whatever the command line says: `make CFLAGS=-O0` adds to these.
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wformat=2 -I. -pthread
ifeq ($(WERROR),1)
override CFLAGS += -Werror
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
TEST_CFLAGS = $(shell pkg-config --cflags $(TEST_PKGS))
TEST_LIBS   = $(shell pkg-config --libs $(TEST_PKGS))
LDLIBS   = $(PKG_LIBS) -lm -pthread

# SAN=asan (what `make asan` sets): AddressSanitizer and UBSan, every object under
# build-asan/; ThreadSanitizer's RCU test cannot share a binary with them, so it stays out.
ifeq ($(SAN),asan)
B := build-asan
# Crashes stay signals (the runner reports them as such); leaks are reported with whole stacks.
export ASAN_OPTIONS := handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0:fast_unwind_on_malloc=0
export UBSAN_OPTIONS := print_stacktrace=1
override CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
TSAN_TEST :=
else
B := build
TSAN_TEST = $(B)/tsan/test_rcu
endif

# The layers, lowest first: a file may include from its own folder and the ones before it
# (tests/layers.sh checks it). cli/ is the top, the only one that sees everything.
LAYERS := util hw impl run judge suites reports session

# Everything but the CLI goes into a static library the tests link too.
LIB_SRCS := $(wildcard $(LAYERS:%=%/*.c) suites/*/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
CLI_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard cli/*.c))
TEST_SRCS := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRCS:tests/%.c=$(B)/tests/%)

# Every C file of the project, for format and lint.
SRCS := $(sort $(wildcard $(LAYERS:%=%/*.[ch]) suites/*/*.[ch] cli/*.[ch] tests/*.[ch] fuzz/*.c ci/fixtures/*.c))

.PHONY: all deps run check tsan asan clean format lint install uninstall
# The guest kit the qemu suite's boot cases boot (guest/mkkit.sh): Debian's cloud kernel from
# the package ci/install-deps.sh keeps in MEMGATE_CACHE, busybox-static and the disks' drivers.
# Without the package there is no kit, and those cases SKIP saying how to get one.
MEMGATE_CACHE ?= /var/cache/memgate
GUEST_KERNEL_DEB ?= $(shell ls -v $(MEMGATE_CACHE)/linux-image-*-cloud-amd64_*.deb 2>/dev/null | tail -n 1)
# A second QEMU beside Debian's: bookworm-backports' 10.0, unpacked there by the install script
# (not installed); the tests run the qemu suite on it too. None: those tests SKIP saying so.
QEMU_NEW ?= $(lastword $(sort $(wildcard $(MEMGATE_CACHE)/qemu-*/root/usr/bin/qemu-system-x86_64)))
# With the kit, this memgate and its libraries packed for `memgate vm` (guest/pack.sh).
GUEST_KIT := $(if $(GUEST_KERNEL_DEB),$(B)/guest/initramfs.cpio $(B)/guest/memgate.cpio)

all: $(B)/memgate $(B)/memgate.1 $(B)/memgate.bash $(GUEST_KIT) $(B)/fixtures/trim_every_free.so

$(B)/guest/initramfs.cpio: guest/mkkit.sh guest/init $(GUEST_KERNEL_DEB) $(wildcard /bin/busybox)
	sh guest/mkkit.sh $(GUEST_KERNEL_DEB) $(B)/guest

# With the host's QEMU too, where there is one, and the module its TCG is in (Debian builds
# accelerators as modules): the qemu suite's checks run in the guest.
GUEST_QEMU := $(shell command -v qemu-system-x86_64)
GUEST_QEMU += $(if $(GUEST_QEMU),$(wildcard /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so))
$(B)/guest/memgate.cpio: $(B)/memgate guest/pack.sh $(GUEST_QEMU)
	@mkdir -p $(dir $@)
	sh guest/pack.sh $(B)/memgate $@ $(GUEST_QEMU)

# The ab fixture of the boot cases (--qemu-preload): a QEMU that trims after every RCU free.
$(B)/fixtures/%.so: ci/fixtures/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -fPIC -o $@ $< -ldl

# The install script is idempotent and quick when everything is there already.
deps:
	@sh ci/install-deps.sh --quiet

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# Made anew each time: an archive updated in place keeps the objects of removed sources.
$(B)/libmemgate.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The commit the binary comes from, for every results file: `git describe`, or "unknown".
COMMIT := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(CLI_OBJS): CFLAGS += -DMEMGATE_COMMIT='"$(COMMIT)"'

$(B)/memgate: $(CLI_OBJS) $(B)/libmemgate.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The manual page and the bash completion are made from the option tables, as --help is:
# none of them can fall out of step with the parser.
$(B)/memgate.1: $(B)/memgate
	$(B)/memgate man > $@.tmp && mv $@.tmp $@

$(B)/memgate.bash: $(B)/memgate
	$(B)/memgate completion > $@.tmp && mv $@.tmp $@

# Installed like any tool, for agents that install memgate once: the binary, its page, its
# bash completion (where bash-completion looks for it). The rules are built into the binary:
# `memgate rules` prints them, and a --rules file holds only what it changes.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPDIR)
	install -m 755 $(B)/memgate $(DESTDIR)$(BINDIR)/memgate
	install -m 644 $(B)/memgate.1 $(DESTDIR)$(MANDIR)/man1/memgate.1
	install -m 644 $(B)/memgate.bash $(DESTDIR)$(COMPDIR)/memgate

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/memgate $(DESTDIR)$(MANDIR)/man1/memgate.1 \
		$(DESTDIR)$(COMPDIR)/memgate

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_CFLAGS) -MMD -MP -c $< -o $@

$(B)/tests/%: $(B)/tests/%.o $(B)/libmemgate.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LIBS)

# The option tables live in the CLI, outside the library: every CLI object but main's.
$(B)/tests/test_options: $(B)/tests/test_options.o $(filter-out $(B)/cli/main.o,$(CLI_OBJS)) \
		$(B)/libmemgate.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LIBS)

# The RCU again under ThreadSanitizer: its barriers and locks, checked as they run.
$(B)/tsan/test_rcu: tests/test_rcu.c impl/rcu.c impl/rcu.h util/text.c util/err.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 -fsanitize=thread $(PKG_CFLAGS) $(TEST_CFLAGS) tests/test_rcu.c impl/rcu.c \
		util/text.c util/err.c -o $@ $(TEST_LIBS) $(PKG_LIBS) -pthread

tsan: $(B)/tsan/test_rcu
	TSAN_OPTIONS=halt_on_error=1 CMOCKA_MESSAGE_OUTPUT=TAP $(B)/tsan/test_rcu

# The main job: everything the host supports, embedded defaults, reports under build/. As root
# it sizes the hugetlb pools for the hugetlb cases (and puts them back); as a user those cases
# SKIP saying what to do. RUN_ARGS adds options: RUN_ARGS=--long, RUN_ARGS=--quick.
# With the guest kit, the prealloc checks then run again inside a two-node guest (memgate
# vm): binding and placement executed on two NUMA nodes, reports in build/*-guest.*; with
# RUN_ARGS=--long, then in the shape of each machine in topologies/ (build/*-guest-NAME.*).
# The status is the first failure's.
RESERVE = $(shell [ "$$(id -u)" = 0 ] && echo --reserve-hugepages)
GUEST_CHECKS = -- run -s prealloc --checks --reserve-hugepages
GUEST_RUN = $(B)/memgate vm --junit $(B)/junit-guest.xml --json $(B)/results-guest.json \
	$(GUEST_CHECKS)
GUEST_SHAPES = $(if $(filter --long,$(RUN_ARGS)),$(wildcard topologies/*.xml))
# Without a /dev/kvm the host can use, the kvm suite runs in a nested guest instead: the kit's
# own kernel package with its KVM modules (memgate vm --kernel), under icount, its figures
# instruction counts that repeat exactly from boot to boot (--quick: 5 samples; about 40 s
# here). Reports in build/*-guest-kvm.*. Not when RUN_ARGS picks suites with -s. It runs beside
# the prealloc checks' guest, once the timed runs are done: checks and icount counts, which the
# host's load does not move (the same medians, to the cycle, beside two busy loops on both
# vCPUs). Its console goes to build/kvm-guest.log, printed when it ends.
KVM_USABLE = $(B)/memgate hw --json | sed -n '/"kvm": {/,/}/p' | grep -q '"usable": true'
GUEST_KVM_RUN = $(B)/memgate vm --kernel $(GUEST_KERNEL_DEB) --junit $(B)/junit-guest-kvm.xml \
	--json $(B)/results-guest-kvm.json -- run -s kvm --quick
GUEST_KVM = $(if $(filter -s --suite,$(RUN_ARGS)),,$(GUEST_KIT))
# With a second QEMU (bookworm-backports' 10.0, which ci/install-deps.sh keeps beside Debian's
# 7.2), the qemu suite's prealloc cases then run again on it: each job measures both versions,
# reports in build/*-qemu-new.*.
QEMU_NEW_RUN = $(B)/memgate run -s qemu -k '*prealloc*' --qemu $(QEMU_NEW) \
	--junit $(B)/junit-qemu-new.xml --json $(B)/results-qemu-new.json $(RESERVE) $(RUN_ARGS)
# The job itself is a second make, started after deps: the guest kit's inputs (the kernel
# package the install script fetches) are looked for when that make reads this file, so the
# first run on a fresh machine builds the kit and runs the guest stage too.
run: deps
	@$(MAKE) --no-print-directory run-job

.PHONY: run-job
run-job: all
	@echo "$(B)/memgate run --junit $(B)/junit.xml --json $(B)/results.json $(RESERVE) $(RUN_ARGS)"
	@st=0; $(B)/memgate run --junit $(B)/junit.xml --json $(B)/results.json $(RESERVE) \
		$(RUN_ARGS) || st=$$?; \
	if [ -n "$(QEMU_NEW)" ]; then \
		echo "$(QEMU_NEW_RUN)"; \
		$(QEMU_NEW_RUN) || { g=$$?; [ $$st -ne 0 ] || st=$$g; }; \
	fi; \
	kvm=; if [ -n "$(GUEST_KVM)" ]; then \
		$(MAKE) --no-print-directory kvm-guest >$(B)/kvm-guest.log 2>&1 & kvm=$$!; \
	fi; \
	if [ -n "$(GUEST_KIT)" ]; then \
		echo "$(GUEST_RUN)"; \
		$(GUEST_RUN) || { g=$$?; [ $$st -ne 0 ] || st=$$g; }; \
		for t in $(GUEST_SHAPES); do \
			n=$$(basename $$t .xml); \
			echo "$(B)/memgate vm --shape-of $$t ... $(GUEST_CHECKS)"; \
			$(B)/memgate vm --shape-of $$t --junit $(B)/junit-guest-$$n.xml \
				--json $(B)/results-guest-$$n.json $(GUEST_CHECKS) || \
				{ g=$$?; [ $$st -ne 0 ] || st=$$g; }; \
		done; \
	fi; \
	if [ -n "$$kvm" ]; then \
		wait $$kvm || { g=$$?; [ $$st -ne 0 ] || st=$$g; }; \
		cat $(B)/kvm-guest.log; \
	fi; \
	exit $$st

# The kvm suite in a nested guest, where the host has no /dev/kvm memgate can use: a stage of
# run-job, and a stage of its own in ci/Jenkinsfile. Its status is the guest command's.
.PHONY: kvm-guest
kvm-guest: all
	@if [ -z "$(GUEST_KIT)" ]; then \
		echo "kvm-guest: no guest kit here (ci/install-deps.sh fetches its kernel package)"; \
	elif $(KVM_USABLE); then \
		echo "kvm-guest: /dev/kvm works here: the host's run has the kvm suite"; \
	else \
		echo "$(GUEST_KVM_RUN)"; \
		$(GUEST_KVM_RUN); \
	fi

check: deps
	@$(MAKE) --no-print-directory all $(TESTS) $(TSAN_TEST)
	@MEMGATE_SAN=$(SAN) MEMGATE_QEMU_NEW=$(QEMU_NEW) sh tests/run.sh $(B) $(TESTS) tests/layers.sh tests/names.sh tests/licence.sh tests/install.sh tests/guest_kit.sh tests/tree_ab.sh tests/tree_bisect.sh $(TSAN_TEST)

# The tests again under AddressSanitizer and UBSan (objects under build-asan/).
asan:
	@$(MAKE) --no-print-directory SAN=asan check

format:
	clang-format -i $(SRCS)

# What CI holds the code to beyond -Werror: the format (make format fixes it), cppcheck, and
# clang-tidy's bugprone and analyzer checks (.clang-tidy says which and why). Any finding fails.
lint: deps
	clang-format --dry-run --Werror $(SRCS)
	cppcheck --std=c11 --enable=warning,portability,performance --error-exitcode=1 \
		--inline-suppr --quiet -D_GNU_SOURCE -D__x86_64__ -I. $(LAYERS) cli tests
	printf '%s\n' $(filter %.c,$(SRCS)) | xargs -P2 -n8 sh -c 'clang-tidy --quiet "$$@" -- \
		-std=c11 -D_GNU_SOURCE -I. $(PKG_CFLAGS) $(TEST_CFLAGS)' clang-tidy

clean:
	rm -rf build build-asan build-fuzz

# The assembler reads the rules into the binary (EMBED_TEXT, .incbin): rebuild when they change.
SUITE_RULES := $(wildcard suites/*/rules.conf)
$(B)/judge/rules_embedded.o: judge/rules.conf
$(SUITE_RULES:%/rules.conf=$(B)/%/suite.o): $(B)/%/suite.o: %/rules.conf

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TESTS:%=%.d)

# Fuzz targets for every parser of outside input memgate owns (clang's libFuzzer, with ASan
# and UBSan): `make fuzz` builds them under build-fuzz/, `make fuzz-run` runs each for
# FUZZ_SECONDS on fuzz/corpus/NAME (new inputs go to build-fuzz/corpus-NAME).
FUZZ_CC      := clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-std=c11 -D_GNU_SOURCE -I.
FUZZ_NAMES   := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_OBJS    := $(patsubst %.c,build-fuzz/%.o,$(LIB_SRCS) $(filter-out cli/main.c,$(wildcard cli/*.c)))

build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c $< -o $@

build-fuzz/judge/rules_embedded.o: judge/rules.conf
$(SUITE_RULES:%/rules.conf=build-fuzz/%/suite.o): build-fuzz/%/suite.o: %/rules.conf

# Kept between builds: make would delete them as intermediates of the targets.
.SECONDARY: $(FUZZ_OBJS)

build-fuzz/fuzz_%: fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) $^ -o $@ $(PKG_LIBS) -lm -pthread

.PHONY: fuzz fuzz-run $(FUZZ_NAMES:%=fuzz-run-%)
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_NAMES:%=build-fuzz/fuzz_%)

# Each target its own make goal, so `make -j2 fuzz-run` runs two at a time; a target fails
# the run when its fuzzer exits non-zero (a crash, a leak, an artifact written).
fuzz-run: $(FUZZ_NAMES:%=fuzz-run-%)

$(FUZZ_NAMES:%=fuzz-run-%): fuzz-run-%: fuzz
	@mkdir -p build-fuzz/corpus-$*
	@echo "fuzz $*: $(FUZZ_SECONDS) s"
	@LSAN_OPTIONS=suppressions=fuzz/lsan.supp build-fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) \
		-max_len=1024 -print_final_stats=1 -artifact_prefix=build-fuzz/$*- \
		build-fuzz/corpus-$* fuzz/corpus/$* >build-fuzz/$*.log 2>&1; \
	st=$$?; sed -n 's/^\(stat::number_of_executed_units\)/$* \1/p' build-fuzz/$*.log; \
	[ $$st -eq 0 ] || { tail -n 40 build-fuzz/$*.log; echo "fuzz $*: exit $$st"; exit 1; }
