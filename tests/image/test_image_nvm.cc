// test_image_nvm.cc — images with NVM through the image layer (open_image, format_image,
// check_params_match): where the NVM is (inside the image, or nvm_path= through libpmem), a
// wrong or missing NVM file refused with the cause named, a set `nvm` that contradicts the
// image named, and nothing left behind by a refused format.
//
// Two kinds of case. Those tagged [nvm] use a device with NVM under a store WITHOUT NVM
// (StoreParams::nvm_bytes = 0: the device may have NVM the store does not use), so they run
// on any engine. Those tagged [nvm-store] make stores that use NVM (nvm=64K, method pdl and
// ipl): they need the NVM engines (the PdlStore / IplStore NVM variants) and fail, naming the
// engine's refusal, until those are merged.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "flash/device/emulated_nand.h"
#include "flash/image/image.h"
#include "flash/image/image_internal.h"
#include "tests/support/require_status.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string message(const Status& s) { return std::string(s.message()); }

// An 8 MiB image at `path` whose device has 64 KiB of NVM (in `nvm_path`, or inside the image)
// and whose store uses none of it; closed.
void make_device_nvm_image(const std::string& path, const std::string& nvm_path) {
  ImageParams p;
  REQUIRE_OK(p.set("size", "8M"));
  Geometry g = p.geometry();
  g.nvm_bytes = 64 << 10;
  std::unique_ptr<EmulatedNand> nand;
  NvmPlacement where;
  where.path = nvm_path;
  REQUIRE_OK(EmulatedNand::create_file(path, g, &nand, where));
  Image img;
  img.path = path;
  img.nand = std::move(nand);
  REQUIRE_OK(format_volume(img, p, "main.db"));
  REQUIRE_OK(img.close());
}

ImageParams with(std::initializer_list<std::pair<const char*, std::string>> kv) {
  ImageParams p;
  for (const auto& [k, v] : kv) REQUIRE_OK(p.set(k, v));
  return p;
}

}  // namespace

TEST_CASE("an image whose device has NVM in a file opens only with that file", "[nvm]") {
  const std::string path = test::temp_path("dev-nvm.img"), nvm = path + ".nvm";
  make_device_nvm_image(path, nvm);
  std::unique_ptr<Image> img;
  SECTION("with its nvm_path: opens, and says where the NVM is") {
    REQUIRE_OK(open_image(path, with({{"nvm_path", nvm}}), ImageMode::kOpen, false, "", &img));
    CHECK(img->nand->geometry().nvm_bytes == 64u << 10);
    CHECK_THAT(img->nand->nvm_place(), Catch::Contains(nvm) && Catch::Contains("libpmem"));
    REQUIRE_OK(img->close());
  }
  SECTION("without nvm_path") {
    const Status s = open_image(path, ImageParams(), ImageMode::kOpen, false, "", &img);
    CHECK(s.is(Errc::kInvalidArgument));
    CHECK_THAT(message(s), Catch::Contains("nvm_path") && Catch::Contains(path));
  }
  SECTION("a missing NVM file") {
    const Status s =
        open_image(path, with({{"nvm_path", nvm + "x"}}), ImageMode::kOpen, true, "", &img);
    CHECK(s.is(Errc::kNotFound));
    CHECK_THAT(message(s), Catch::Contains(nvm + "x") && Catch::Contains("missing"));
  }
  SECTION("another store's NVM file") {
    const std::string other = test::temp_path("other.img");
    make_device_nvm_image(other, other + ".nvm");
    const Status s =
        open_image(path, with({{"nvm_path", other + ".nvm"}}), ImageMode::kOpen, false, "", &img);
    CHECK(s.is(Errc::kInvalidArgument));
    CHECK_THAT(message(s), Catch::Contains("belongs to another store") && Catch::Contains(other));
    test::remove_temp(other);
  }
  SECTION("a garbage NVM file") {
    { std::ofstream(nvm, std::ios::binary | std::ios::in | std::ios::out).write("garbage!", 8); }
    const Status s = open_image(path, with({{"nvm_path", nvm}}), ImageMode::kOpen, false, "", &img);
    CHECK(s.is(Errc::kCorrupt));
    CHECK_THAT(message(s), Catch::Contains(nvm) && Catch::Contains("not a pdl NVM file"));
  }
  SECTION("a set nvm that contradicts the store is named") {
    const Status s = open_image(path, with({{"nvm_path", nvm}, {"nvm", "64K"}}), ImageMode::kOpen,
                                false, "", &img);
    CHECK(s.is(Errc::kInvalidArgument));
    CHECK_THAT(message(s), Catch::Contains("nvm=64K contradicts the existing image") &&
                               Catch::Contains("nvm=0") && Catch::Contains("64K of NVM"));
  }
  test::remove_temp(path);
}

TEST_CASE("an image whose device has NVM inside it refuses an nvm_path", "[nvm]") {
  const std::string path = test::temp_path("dev-nvm-in.img");
  make_device_nvm_image(path, "");
  std::unique_ptr<Image> img;
  REQUIRE_OK(open_image(path, ImageParams(), ImageMode::kOpen, true, "", &img));
  CHECK_THAT(img->nand->nvm_place(), Catch::Contains("image file " + path));
  img.reset();
  const Status s =
      open_image(path, with({{"nvm_path", path + ".nvm"}}), ImageMode::kOpen, false, "", &img);
  CHECK(s.is(Errc::kInvalidArgument));
  CHECK_THAT(message(s), Catch::Contains("inside the image"));
  CHECK_FALSE(exists(path + ".nvm"));
  test::remove_temp(path);
}

TEST_CASE("format with nvm_path but no NVM is refused and leaves no file", "[nvm]") {
  const std::string path = test::temp_path("no-nvm.img"), nvm = path + ".nvm";
  std::unique_ptr<Image> img;
  const Status s = format_image(path, with({{"size", "8M"}, {"nvm_path", nvm}}), "", false, &img);
  CHECK(s.is(Errc::kInvalidArgument));
  CHECK_THAT(message(s), Catch::Contains("without NVM"));
  CHECK_FALSE(exists(path));
  CHECK_FALSE(exists(nvm));
  test::remove_temp(path);
}

// ---- stores that use NVM: these need the NVM engines ----

TEST_CASE("a store with nvm=64K is created, reopened and keeps its NVM, in the image or in "
          "an NVM file",
          "[nvm-store]") {
  for (const char* method : {"pdl", "ipl"}) {
    for (bool file : {false, true}) {
      INFO(method << (file ? " with nvm_path" : " NVM inside the image"));
      const std::string path = test::temp_path("store-nvm.img"), nvm = path + ".nvm";
      ImageParams p = with({{"size", "8M"}, {"method", method}, {"nvm", "64K"}});
      if (file) REQUIRE_OK(p.set("nvm_path", nvm));
      std::unique_ptr<Image> img;
      REQUIRE_OK(open_image(path, p, ImageMode::kCreate, false, "main.db", &img));
      {
        auto guard = img->volume->lock();
        CHECK(img->volume->store().params().nvm_bytes == 64u << 10);
      }
      REQUIRE_OK(img->close());
      img.reset();
      ImageParams reopen;
      if (file) reopen.nvm_path = nvm;
      REQUIRE_OK(open_image(path, reopen, ImageMode::kOpen, false, "", &img));
      {
        auto guard = img->volume->lock();
        CHECK(img->volume->store().params().nvm_bytes == 64u << 10);
      }
      img.reset();
      reopen.nvm = 32 << 10;
      const Status s = open_image(path, reopen, ImageMode::kOpen, false, "", &img);
      CHECK(s.is(Errc::kInvalidArgument));
      CHECK_THAT(message(s), Catch::Contains("nvm=32K contradicts the existing image, which has "
                                             "nvm=64K"));
      test::remove_temp(path);
    }
  }
}

TEST_CASE("format replaces its own image's NVM file but not another store's; an empty image "
          "moves its NVM to a file",
          "[nvm-store]") {
  const std::string a = test::temp_path("a.img"), b = test::temp_path("b.img");
  const ImageParams pa = with({{"size", "8M"}, {"nvm", "64K"}, {"nvm_path", a + ".nvm"}});
  std::unique_ptr<Image> img;
  REQUIRE_OK(format_image(a, pa, "", false, &img));
  REQUIRE_OK(img->close());
  img.reset();
  REQUIRE_OK(format_image(a, pa, "", false, &img));  // the same image again: its own file
  REQUIRE_OK(img->close());
  img.reset();
  // Another image may not take a's NVM file, unless forced.
  const Status s = format_image(b, pa, "", false, &img);
  CHECK(s.is(Errc::kExists));
  CHECK_THAT(message(s), Catch::Contains("belongs to another store") && Catch::Contains(a));
  CHECK_FALSE(exists(b));
  REQUIRE_OK(open_image(a, with({{"nvm_path", a + ".nvm"}}), ImageMode::kOpen, true, "", &img));
  img.reset();
  REQUIRE_OK(format_image(b, pa, "", true, &img));
  img.reset();
  // An empty image whose NVM is inside may become one with an NVM file, unforced.
  const std::string c = test::temp_path("c.img");
  REQUIRE_OK(format_image(c, with({{"size", "8M"}, {"nvm", "64K"}}), "", false, &img));
  img.reset();
  REQUIRE_OK(format_image(c, with({{"size", "8M"}, {"nvm", "64K"}, {"nvm_path", c + ".nvm"}}),
                          "", false, &img));
  img.reset();
  // Back again cannot be checked for files without the old NVM file, which the new params do
  // not name: refused (kExists, saying why) unless forced.
  const Status back = format_image(c, with({{"size", "8M"}, {"nvm", "64K"}}), "", false, &img);
  CHECK(back.is(Errc::kExists));
  CHECK_THAT(message(back), Catch::Contains("keeps its NVM in a file of its own"));
  REQUIRE_OK(format_image(c, with({{"size", "8M"}, {"nvm", "64K"}}), "", true, &img));
  img.reset();
  test::remove_temp(c);
  test::remove_temp(a);
  test::remove_temp(b);
}
