<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

// JSON (LONGTEXT with a json_valid CHECK on MariaDB), boolean and enum
// columns on the sharded table.
return new class extends Migration {
    public function up()
    {
        Schema::table('orders', function (Blueprint $table) {
            $table->json('meta')->nullable();
            $table->boolean('gift')->default(false);
            $table->enum('channel', ['web', 'shop', 'phone'])->default('web');
        });
    }

    public function down()
    {
        Schema::table('orders', function (Blueprint $table) {
            $table->dropColumn(['meta', 'gift', 'channel']);
        });
    }
};
