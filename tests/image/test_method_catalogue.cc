// test_method_catalogue.cc — the one method catalogue (flash/image/methods.h): both programs'
// keys name the same entries, labels print as the figures print them, presets become the
// store parameters and VFS URI parameters they stand for, and traits come from the Method.
#include <catch2/catch.hpp>

#include "flash/image/methods.h"
#include "flash/image/open_store.h"

using namespace pdl;

TEST_CASE("the catalogue lists the paper's configurations in Fig. 8 order", "[methods]") {
  std::vector<std::string> keys, labels;
  for (const MethodPreset& m : method_catalogue()) {
    keys.push_back(m.key);
    labels.push_back(m.label);
  }
  CHECK(keys == std::vector<std::string>{"pdl256", "pdl2k", "opu", "ipu", "ipl18k", "ipl64k",
                                         "ipl18k-diff", "ipl64k-diff", "ipl18k-s128",
                                         "ipl64k-s128", "pdl2k-nomerge", "ftl-page", "bast16",
                                         "bast32", "fast16", "fast32", "sb-page", "sb-bast16",
                                         "sb-fast16", "pdl-nvm", "pdl2k-nvm", "ipl-pcram",
                                         "ipl-pcram512"});
  CHECK(labels == std::vector<std::string>{"PDL(256B)", "PDL(2KB)", "OPU", "IPU", "IPL(18KB)",
                                           "IPL(64KB)", "IPL(18KB)/diff", "IPL(64KB)/diff",
                                           "IPL(18KB)/128B", "IPL(64KB)/128B",
                                           "PDL(2KB)/no-merge", "FTL(page)", "BAST(16)",
                                           "BAST(32)", "FAST(16)", "FAST(32)", "SB/FTL(page)",
                                           "SB/BAST(16)", "SB/FAST(16)", "PDL(256B)+NVM(64KB)",
                                           "PDL(2KB)+NVM(64KB)", "IPL+PCRAM(128B)",
                                           "IPL+PCRAM(512B)"});
  CHECK(method_keys() ==
        "pdl256, pdl2k, opu, ipu, ipl18k, ipl64k, ipl18k-diff, ipl64k-diff, ipl18k-s128, "
        "ipl64k-s128, pdl2k-nomerge, ftl-page, bast16, bast32, fast16, fast32, sb-page, "
        "sb-bast16, sb-fast16, pdl-nvm, pdl2k-nvm, ipl-pcram, ipl-pcram512");
  CHECK(method_keys(true) == "pdl, pdl2k, opu, ipu, ipl, ipl64k");
  CHECK(paper_methods().size() == 6);
}

TEST_CASE("the FTL devices are apart from the page-update methods on raw NAND", "[methods]") {
  std::vector<std::string> ftl, raw;
  for (const MethodPreset& m : ftl_methods()) ftl.push_back(m.key);
  for (const MethodPreset& m : raw_nand_methods()) raw.push_back(m.key);
  CHECK(ftl == std::vector<std::string>{"ftl-page", "bast16", "bast32", "fast16", "fast32",
                                        "sb-page", "sb-bast16", "sb-fast16"});
  CHECK(raw.size() + ftl.size() + nvm_methods().size() == method_catalogue().size());
  for (const MethodPreset& m : ftl_methods()) {
    INFO(m.key);
    CHECK(is_ftl_device(m.method));
    CHECK_FALSE(has_atomic_commit(m.method));
    CHECK_FALSE(m.paper());
    const StoreParams p = m.params(0, ObsoleteMode::kMemory);
    CHECK(p.ftl == m.ftl);
    CHECK(p.log_blocks == m.log_blocks);
    CHECK(method_label(p, 2048) == m.label);
    CHECK(p.check_method().is_ok());
  }
  CHECK(find_method("bast32")->uri_params(2048) == "method=ftl&ftl=bast&log_blocks=32");
  CHECK(find_method("sb-page")->uri_params(2048) == "method=stablebuffer&ftl=page");
  CHECK(find_method("ftl-page")->uri_params(2048) == "method=ftl&ftl=page");
}

TEST_CASE("the NVM entries carry the NVM the store and the device need, and are labelled by it",
          "[methods]") {
  std::vector<std::string> keys;
  for (const MethodPreset& m : nvm_methods()) keys.push_back(m.key);
  CHECK(keys == std::vector<std::string>{"pdl-nvm", "pdl2k-nvm", "ipl-pcram", "ipl-pcram512"});
  for (const MethodPreset& m : raw_nand_methods()) CHECK_FALSE(m.uses_nvm());
  for (const MethodPreset& m : nvm_methods()) {
    INFO(m.key);
    CHECK_FALSE(m.paper());
    CHECK(can_use_nvm(m.method));
    const StoreParams p = m.params(10, ObsoleteMode::kSpare, 256);
    CHECK(p.nvm_bytes == m.nvm_bytes(256));
    CHECK(p.nvm_bytes > 0);
    CHECK(p.check_method().is_ok());
    CHECK(method_label(p, 2048) == m.label);
  }
  // PDL+NVM: 64 KiB whatever the chip; Max_Differential_Size 256 bytes or a page.
  const MethodPreset& pdl = *find_method("pdl-nvm");
  CHECK(pdl.nvm_bytes(256) == 64 * 1024);
  CHECK(pdl.nvm_bytes(4096) == 64 * 1024);
  CHECK(pdl.uri_params(2048) == "method=pdl&max_diff=256&nvm=64K");
  CHECK(find_method("pdl2k-nvm")->uri_params(2048) == "method=pdl&max_diff=2048&nvm=64K");
  CHECK(find_method("pdl2k-nvm")->params(10, ObsoleteMode::kSpare).max_differential == 0);
  // IPL+PCRAM: IPL(18KB)'s log capacity per block, in NVM; the sector in the URI.
  const MethodPreset& ipl = *find_method("ipl-pcram");
  CHECK(ipl.nvm_bytes(256) == 256u * 18 * 1024);
  CHECK(ipl.params(10, ObsoleteMode::kSpare, 256).log_region == 18 * 1024);
  CHECK(ipl.params(10, ObsoleteMode::kSpare, 256).log_sector == 128);
  CHECK(ipl.uri_params(2048, 256ull * 128 * 1024) ==
        "method=ipl&log_region=18K&log_sector=128&nvm=4608K");
  CHECK(find_method("ipl-pcram512")->uri_params(2048, 512ull * 128 * 1024) ==
        "method=ipl&log_region=18K&log_sector=512&nvm=9M");
  // Without the chip size the NVM cannot be sized: the URI says so instead of going flash-only.
  CHECK(ipl.uri_params(2048) == "method=ipl&log_region=18K&log_sector=128&nvm=per-block");
  // Flash-only entries are unchanged by the chip size.
  CHECK(find_method("ipl")->uri_params(2048, 256ull * 128 * 1024) == "method=ipl&log_region=18K");
  CHECK(find_method("pdl2k")->params(10, ObsoleteMode::kSpare, 256).nvm_bytes == 0);
  StoreParams q = pdl.params(10, ObsoleteMode::kSpare);
  q.max_differential = 1024;
  CHECK(method_label(q, 2048) == "PDL(1KB)+NVM(64KB)");
  StoreParams r = ipl.params(10, ObsoleteMode::kSpare, 16);
  r.log_region = 8 * 1024;
  r.log_sector = 0;
  CHECK(method_label(r, 2048) == "IPL(8KB)+PCRAM(128B)");
}

TEST_CASE("a key and its short key name the same entry", "[methods]") {
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {"pdl", "pdl256"}, {"ipl", "ipl18k"}, {"opu", "opu"}, {"pdl2k", "pdl2k"}}) {
    INFO(a << " / " << b);
    REQUIRE(find_method(a) != nullptr);
    CHECK(find_method(a) == find_method(b));
  }
  CHECK(find_method("pdl256")->tpcc_key() == "pdl");
  CHECK(find_method("ipl64k")->tpcc_key() == "ipl64k");
  CHECK(find_method("PDL") == nullptr);
  CHECK(find_method("") == nullptr);
}

TEST_CASE("a method list keeps its order, drops repeats and names an unknown key",
          "[methods]") {
  std::vector<MethodPreset> out;
  std::string err;
  REQUIRE(parse_methods("ipl,pdl256,pdl,ipl18k", method_catalogue(), "K", &out, &err));
  REQUIRE(out.size() == 2);
  CHECK(out[0].key == "ipl18k");
  CHECK(out[1].key == "pdl256");
  CHECK_FALSE(parse_methods("pdl,ipl18k-diff", paper_methods(), "K", &out, &err));
  CHECK(err == "unknown method 'ipl18k-diff' (known: K)");
  CHECK_FALSE(parse_methods(",", method_catalogue(), "K", &out, &err));
  CHECK(err == "no method given");
}

TEST_CASE("a preset becomes its store parameters and VFS URI parameters", "[methods]") {
  const StoreParams p = find_method("pdl256")->params(100, ObsoleteMode::kMemory);
  CHECK(p.method == Method::kPdl);
  CHECK(p.max_differential == 256);
  CHECK(p.log_region == 0);
  CHECK(p.logical_pages == 100);
  CHECK(p.obsolete == ObsoleteMode::kMemory);
  CHECK(find_method("ipl64k")->params(7, ObsoleteMode::kSpare).log_region == 64 * 1024);
  CHECK(find_method("pdl")->uri_params(2048) == "method=pdl&max_diff=256");
  CHECK(find_method("pdl2k")->uri_params(2048) == "method=pdl&max_diff=2048");
  CHECK(find_method("pdl2k")->uri_params(4096) == "method=pdl&max_diff=4096");  // a page
  CHECK(find_method("opu")->uri_params(2048) == "method=opu");
  CHECK(find_method("ipu")->uri_params(2048) == "method=ipu");
  CHECK(find_method("ipl")->uri_params(2048) == "method=ipl&log_region=18K");
  CHECK(find_method("ipl64k")->uri_params(2048) == "method=ipl&log_region=64K");
}

TEST_CASE("a resolved preset on 2 KiB pages is labelled as the catalogue labels it",
          "[methods]") {
  Geometry g;
  g.blocks = 256;
  g = g.resolved();
  for (const MethodPreset& m : paper_methods()) {
    StoreParams p = m.params(1000, ObsoleteMode::kSpare);
    REQUIRE(resolve_store_params(&p, g).is_ok());
    CHECK(method_label(p, g.page_data) == m.label);
  }
}

TEST_CASE("the fidelity variants carry their log sector or GC-merge switch and are labelled "
          "by it, not among the paper's six",
          "[methods]") {
  const StoreParams s128 = find_method("ipl18k-s128")->params(10, ObsoleteMode::kSpare);
  CHECK(s128.log_sector == 128);
  CHECK(s128.log_region == 18 * 1024);
  CHECK(method_label(s128, 2048) == "IPL(18KB)/128B");
  CHECK(find_method("ipl64k-s128")->params(10, ObsoleteMode::kSpare).log_sector == 128);
  const StoreParams nm = find_method("pdl2k-nomerge")->params(10, ObsoleteMode::kSpare);
  CHECK_FALSE(nm.gc_merge);
  CHECK(method_label(nm, 2048) == "PDL(2KB)/no-merge");
  StoreParams s512 = find_method("ipl18k")->params(10, ObsoleteMode::kSpare);
  s512.log_sector = 512;
  CHECK(method_label(s512, 2048) == "IPL(18KB)");  // 512 is the default: no suffix
  for (const MethodPreset& m : paper_methods())
    CHECK((m.log_sector == 0 && m.gc_merge && m.note_updates));
}

TEST_CASE("an IPL preset of any log region and sector is the catalogue's entry when it has one",
          "[methods]") {
  CHECK(ipl_preset(18 * 1024, 512).key == "ipl18k");
  CHECK(ipl_preset(18 * 1024, 0).key == "ipl18k");
  CHECK(ipl_preset(64 * 1024, 128).key == "ipl64k-s128");
  const MethodPreset m = ipl_preset(12 * 1024, 128);
  CHECK(m.key == "ipl12k-s128");
  CHECK(m.label == "IPL(12KB)/128B");
  CHECK(m.params(10, ObsoleteMode::kSpare).log_region == 12 * 1024);
  CHECK(ipl_preset(8 * 1024, 512).label == "IPL(8KB)");
  CHECK_FALSE(ipl_preset(8 * 1024, 128).paper());
}

TEST_CASE("traits come from the method", "[methods]") {
  CHECK(has_obsolete_marks(Method::kPdl));
  CHECK(has_obsolete_marks(Method::kOpu));
  CHECK_FALSE(has_obsolete_marks(Method::kIpu));
  CHECK_FALSE(has_obsolete_marks(Method::kIpl));
  CHECK(in_page(Method::kIpu));
  CHECK(in_page(Method::kIpl));
  CHECK_FALSE(in_page(Method::kPdl));
  CHECK_FALSE(in_page(Method::kOpu));
  CHECK(writes_differentials(Method::kPdl));
  CHECK_FALSE(writes_differentials(Method::kOpu));
  CHECK(has_log_region(Method::kIpl));
  CHECK_FALSE(has_log_region(Method::kIpu));
  CHECK_FALSE(has_atomic_commit(Method::kIpu));
  CHECK(has_atomic_commit(Method::kIpl));
  CHECK(obsolete_label(Method::kOpu, ObsoleteMode::kMemory) == "memory");
  CHECK(obsolete_label(Method::kIpl, ObsoleteMode::kMemory) == "none");
  for (const MethodPreset& m : method_catalogue())
    CHECK(m.has_obsolete_modes() == (m.key.rfind("pdl", 0) == 0 || m.key == "opu"));
}
